/* The online check-in page: a click on a free seat of the cabin map puts it in the chosen
 * passenger's list; the live seat map (live-seats.js) marks seats taken or freed by others
 * and keeps the lists honest.  Without JavaScript the lists alone do the job. */
(function () {
  "use strict";
  var form = document.getElementById("checkin-form");
  if (!form) return;

  function activeSelect() {
    var chosen = form.querySelector("input[name=choosing]:checked");
    return chosen && document.getElementById("seat-" + chosen.value);
  }

  form.querySelectorAll(".cabin-map button[data-seat]").forEach(function (button) {
    button.addEventListener("click", function () {
      var select = activeSelect();
      if (!select) return;
      var seat = button.dataset.seat;
      if (!select.querySelector('option[value="' + seat + '"]')) return;
      select.value = seat;
      form.querySelectorAll(".cabin-map button.selected").forEach(function (b) {
        if (b.dataset.seat === seat) b.classList.remove("selected");
      });
      button.classList.add("selected");
    });
  });

  function apply(seats) {
    Object.keys(seats).forEach(function (seat) {
      var button = form.querySelector('.cabin-map button[data-seat="' + seat + '"]');
      if (!button) return;
      var free = seats[seat] === "AVAILABLE";
      button.disabled = !free;
      button.classList.toggle("taken", !free);
      button.dataset.status = seats[seat];
    });
  }

  if (window.SeatkeeperLive) window.SeatkeeperLive.start({ form: form, apply: apply });
})();
