/* The sandbox checkout, once done, returns to Seatkeeper by itself, the way a provider's page
 * does, but replacing itself in the history: Back from the booking page then shows this
 * finished checkout and stays (a page reached by Back or Forward never sends you on). */
(function () {
  "use strict";
  var link = document.querySelector("[data-testid=return]");
  var note = document.getElementById("returning");
  if (!link || !note) return;
  var nav = window.performance && performance.getEntriesByType
    ? performance.getEntriesByType("navigation")[0] : null;
  if (nav && nav.type === "back_forward") {
    note.hidden = true;
    return;
  }
  setTimeout(function () { window.location.replace(link.href); }, 3000);
})();
