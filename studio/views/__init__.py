"""Views, one module per page; each is thin: authorise, call one service, render."""
