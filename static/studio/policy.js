/* Route Studio, policy page: a setting that applies to some scorer kinds only (the sentence
 * encoder: the lexical scorer reads with none) shows while one of them is chosen. Its value
 * is still posted, and kept, while hidden; without script every setting shows. */
(function () {
  "use strict";

  function sync() {
    var kind = document.querySelector('select[name="scorer_kind"]');
    if (!kind) return;
    document.querySelectorAll("[data-for-kinds]").forEach(function (field) {
      var row = field.closest("tr");
      var kinds = field.getAttribute("data-for-kinds").split(" ");
      if (row) row.hidden = kinds.indexOf(kind.value) < 0;
    });
  }

  document.addEventListener("change", function (event) {
    if (event.target && event.target.name === "scorer_kind") sync();
  });
  document.addEventListener("DOMContentLoaded", sync);
  document.addEventListener("htmx:afterSwap", sync); // a saved or refused form comes back whole
})();
