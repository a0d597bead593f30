// The join form of a queue that needs a proof-of-work: ask for a challenge, solve it with
// scrypt (scrypt.js), then send the form with the answer.  Without JavaScript the page's
// <noscript> says what is needed; the server refuses a join without a proof either way.
(function () {
  "use strict";
  var form = document.getElementById("join-form");
  if (!form || !form.dataset.powUrl || !window.SeatkeeperScrypt) return;
  var progress = document.getElementById("pow-progress");
  var button = document.getElementById("join-queue");
  var solving = false;

  function say(text) {
    progress.hidden = false;
    progress.textContent = text;
  }

  form.addEventListener("submit", function (event) {
    if (document.getElementById("proof-solution").value) return; // solved: send it
    event.preventDefault();
    if (solving) return;
    solving = true;
    button.disabled = true;
    say(gettext("Checking your browser…"));
    var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
    fetch(form.dataset.powUrl, { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrf } })
      .then(function (r) {
        if (!r.ok) throw new Error("challenge " + r.status);
        return r.json();
      })
      .then(function (c) {
        var expected = Math.pow(2, c.difficulty);
        return window.SeatkeeperScrypt.solve(c.challenge, c.difficulty, c.scrypt, function (tries) {
          if (tries % 4 === 0) {
            var percent = Math.min(99, Math.round((100 * tries) / expected));
            say(interpolate(gettext("Checking your browser: about %(percent)s percent done"), { percent: percent }, true));
          }
        }).then(function (found) {
          document.getElementById("proof-challenge").value = c.challenge;
          document.getElementById("proof-solution").value = found.solution;
          say(gettext("Done. Joining the queue…"));
          form.submit();
        });
      })
      .catch(function () {
        solving = false;
        button.disabled = false;
        say(gettext("The browser check failed. Please try again."));
      });
  });
})();
