/* After the waiting room let a shopper in: the time left of their turn, counted down from the
 * server's clock as the hold page does (correcting only for the clocks' difference). */
(function () {
  "use strict";
  var box = document.getElementById("turn-timer");
  if (!box) return;
  var endsAt = Date.parse(box.dataset.expiresAt);
  var skew = Date.parse(box.dataset.serverNow) - Date.now();
  var out = document.getElementById("turn-left");
  function pad(n) { return n < 10 ? "0" + n : String(n); }
  function tick() {
    var left = Math.max(0, Math.round((endsAt - (Date.now() + skew)) / 1000));
    out.textContent = pad(Math.floor(left / 60)) + ":" + pad(left % 60);
    if (left === 0) {
      box.hidden = true;
      document.getElementById("turn-over").hidden = false;
      return;
    }
    setTimeout(tick, 1000 - ((Date.now() + skew) % 1000));
  }
  tick();
})();
