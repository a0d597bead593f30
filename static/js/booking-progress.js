/* Booking page and "My bookings": while something happens elsewhere (the payment webhook, the
 * ticket worker, a refund, a waitlist offer), ask the server every second whether the page would look
 * different, and reload it when it would.  The server decides; the page only asks. */
(function () {
  "use strict";
  var box = document.querySelector("[data-poll-url]");
  if (!box) return;
  var state = box.dataset.state;

  function poll(delay) {
    setTimeout(function () {
      fetch(box.dataset.pollUrl, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error("progress " + response.status);
          return response.json();
        })
        .then(function (data) {
          if (data.state !== state) {
            window.location.reload();
          } else {
            poll(1000);
          }
        })
        .catch(function () { poll(Math.min(delay * 2, 10000)); });
    }, delay);
  }
  poll(1000);
})();
