// A box that scrolls sideways (a wide table on a phone) can be scrolled from the keyboard:
// it takes the focus when, and only when, it really overflows.
(function () {
  "use strict";
  function markScrollers() {
    document.querySelectorAll(".inline-group, .form-row .readonly, .admin-seat-map, .results")
      .forEach(function (box) {
        if (box.scrollWidth > box.clientWidth + 1) {
          box.setAttribute("tabindex", "0");
        } else if (box.getAttribute("tabindex") === "0") {
          box.removeAttribute("tabindex");
        }
      });
  }
  document.addEventListener("DOMContentLoaded", markScrollers);
  window.addEventListener("resize", markScrollers);
})();
