/* Hold page: counts down to the hold's expiresAt.  The server's clock decides; the page
 * only corrects for the difference between the two clocks at load time. */
(function () {
  "use strict";
  var box = document.getElementById("hold-timer");
  if (!box) return;
  var expiresAt = Date.parse(box.dataset.expiresAt);
  var skew = Date.parse(box.dataset.serverNow) - Date.now();
  var out = document.getElementById("countdown");
  var expired = document.getElementById("hold-expired");
  var actions = document.getElementById("hold-actions");
  var lastAnnounced = null;

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  function tick() {
    var left = Math.max(0, Math.round((expiresAt - (Date.now() + skew)) / 1000));
    out.textContent = pad(Math.floor(left / 60)) + ":" + pad(left % 60);
    // Announce to screen readers once a minute, and every 10 s in the last minute.
    var bucket, label;
    if (left > 60) {
      bucket = Math.ceil(left / 60);
      label = ngettext("about %(count)s minute left", "about %(count)s minutes left", bucket);
    } else {
      bucket = -Math.ceil(left / 10) * 10;
      label = ngettext("about %(count)s second left", "about %(count)s seconds left", -bucket);
    }
    if (bucket !== lastAnnounced) {
      out.setAttribute("aria-label", interpolate(label, { count: Math.abs(bucket) }, true));
      lastAnnounced = bucket;
    }
    if (left === 0) {
      box.hidden = true;
      expired.hidden = false;
      if (actions) actions.hidden = true;
      // One state: nothing on the page may still say the seats are held.
      Array.prototype.forEach.call(document.querySelectorAll("#payment-declined, #payment-pending"), function (el) { el.hidden = true; });
      var booking = document.querySelector(".booking");
      booking.dataset.status = "EXPIRED";
      booking.querySelector("h1").textContent = gettext("Your hold has expired");
      return;
    }
    setTimeout(tick, 1000 - ((Date.now() + skew) % 1000));
  }
  tick();
})();
