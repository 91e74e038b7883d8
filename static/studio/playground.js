/* Route Studio playground: small enhancements over htmx. No framework, no inline scripts (CSP).
 * - Enter in the message box sends the turn (Shift+Enter adds a line).
 * - Sliders show their value as they move.
 * - "Copy JSON" copies the raw decision event.
 * - When the draft's model is ready, the message being typed is routed again.
 * Typing itself is htmx: the form posts on `input changed delay:150ms` with `hx-sync="this:replace"`,
 * so a slow answer never overwrites a newer one. */
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || !box.hasAttribute("data-message")) return;
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    var send = box.form && box.form.querySelector("[data-send]");
    if (send) send.click();
  });

  document.addEventListener("input", function (event) {
    var slider = event.target;
    if (!(slider instanceof HTMLInputElement) || !slider.dataset.output) return;
    var out = document.getElementById(slider.dataset.output);
    if (out) out.textContent = Number(slider.value).toFixed(2);
  });

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    copy(source.textContent || "").then(
      function () { flash(button, "Copied"); },
      function () { flash(button, "Select and copy"); }
    );
  });

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "sr-only";
      document.body.appendChild(area);
      area.select();
      var ok = document.execCommand("copy");
      area.remove();
      if (ok) { resolve(); } else { reject(new Error("copy refused")); }
    });
  }

  function flash(button, text) {
    var label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    button.textContent = text;
    window.setTimeout(function () { button.textContent = label; }, 1500);
  }

  // The draft's model is ready (`model-ready`, from the model note's poll): route the message
  // being typed again with it. With the box empty a turn was just sent, and asking again would
  // swap that turn's verdict for "type a message", so the panel keeps it.
  document.addEventListener("model-ready", function () {
    var box = document.querySelector("[data-message]");
    if (box && box.value.trim()) document.body.dispatchEvent(new CustomEvent("model-ready-reroute"));
  });

  // After a turn is sent (the server retargets the answer to the workspace) the cursor goes
  // back to the message box, ready for the next turn.
  document.addEventListener("htmx:afterSettle", function (event) {
    var xhr = event.detail && event.detail.xhr;
    if (!xhr || xhr.getResponseHeader("HX-Retarget") !== "#workspace") return;
    var box = document.querySelector("[data-message]");
    if (box) box.focus();
  });
})();
