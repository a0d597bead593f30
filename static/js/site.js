/* Every page: deadlines in the reader's own time zone, and a busy state on buttons while the
 * server works.  Without JavaScript the server's text stays (UTC, labelled). */
(function () {
  "use strict";
  var format = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
    weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", timeZoneName: "short"
  });
  function localise(root) {
    Array.prototype.forEach.call((root || document).querySelectorAll("time[data-local]"), function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      el.textContent = format.format(when);
      el.dataset.localised = Intl.DateTimeFormat().resolvedOptions().timeZone || "local";
    });
  }
  window.seatkeeperLocalise = localise;
  localise(document);

  document.addEventListener("submit", function (event) {
    if (event.defaultPrevented) return;
    var button = event.submitter || event.target.querySelector("button[type=submit], button:not([type])");
    if (!button || button.getAttribute("aria-busy") === "true") return;
    button.setAttribute("aria-busy", "true");
    button.dataset.label = button.textContent;
    // Disabled after the form data is taken, so the button's own name/value still goes.
    setTimeout(function () { button.disabled = true; }, 0);
    // Back from the browser's page cache: usable again.
    window.addEventListener("pageshow", function () {
      button.removeAttribute("aria-busy");
      button.disabled = false;
    }, { once: true });
  });
})();
