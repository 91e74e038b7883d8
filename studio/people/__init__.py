"""People and their roles, managed in the product by an admin: accounts, forms, the people page."""
