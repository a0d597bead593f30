/* The ticket page's live code (docs/tickets.md, "Rotating codes").
 *
 * Each valid ticket gets a key pair made here, with WebCrypto's Ed25519: the private key is
 * not extractable and stays in this browser's IndexedDB; the server certifies the public key.
 * Every time step the page signs "SKR1.<certificate>.<step>" and draws the QR code itself
 * (qr.js), so the code keeps changing with no network at the gate.  A browser without
 * Ed25519 asks the server to make the key and fetches each step's code instead.
 * The step follows the server's clock: the offset is measured when the certificate comes. */
(function () {
  "use strict";
  var boxes = document.querySelectorAll("[data-live-code]");
  if (!boxes.length || !window.SeatkeeperQR) return;
  var csrf = (document.querySelector("[data-csrf]") || { dataset: {} }).dataset.csrf || "";
  var text = {
    live: gettext("Live code — changes every %s seconds. A screenshot will not get you in."),
    offline: gettext("Live code (offline) — changes every %s seconds."),
    failed: gettext("The live code could not be prepared. Connect to the internet once, or use the printed ticket."),
  };

  function b64(bytes) {
    var s = "";
    new Uint8Array(bytes).forEach(function (b) { s += String.fromCharCode(b); });
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // --- this browser's keys, one per ticket serial ---
  function store(mode, work) {
    return new Promise(function (resolve, reject) {
      var open = indexedDB.open("seatkeeper-tickets", 1);
      open.onupgradeneeded = function () { open.result.createObjectStore("keys", { keyPath: "serial" }); };
      open.onerror = function () { reject(open.error); };
      open.onsuccess = function () {
        var tx = open.result.transaction("keys", mode);
        var request = work(tx.objectStore("keys"));
        tx.oncomplete = function () { resolve(request.result); };
        tx.onerror = function () { reject(tx.error); };
      };
    });
  }
  function loadKey(serial) { return store("readonly", function (s) { return s.get(serial); }); }
  function saveKey(record) { return store("readwrite", function (s) { return s.put(record); }); }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
      body: JSON.stringify(body),
    }).then(function (response) {
      if (!response.ok) throw new Error("credential " + response.status);
      return response.json();
    });
  }

  // A key made and kept here; the server only sees (and certifies) its public half.
  function deviceSigner(box) {
    var serial = box.dataset.serial;
    return loadKey(serial).then(function (record) {
      if (record) return record;
      return crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]).then(function (pair) {
        return crypto.subtle.exportKey("raw", pair.publicKey).then(function (raw) {
          return { serial: serial, privateKey: pair.privateKey, publicKey: b64(raw) };
        });
      });
    }).then(function (record) {
      return post(box.dataset.credentialUrl, { publicKey: record.publicKey }).then(function (credential) {
        record.certificate = credential.certificate;
        record.stepSeconds = credential.stepSeconds;
        return saveKey(record).then(function () { return { record: record, credential: credential }; });
      }, function (error) {
        // No network: a certificate from an earlier visit still works at the gate.
        if (record.certificate) return { record: record, credential: null };
        throw error;
      });
    }).then(function (found) {
      var record = found.record;
      return {
        offline: !found.credential,
        stepSeconds: record.stepSeconds,
        offsetMs: found.credential ? found.credential.serverTimeMs - Date.now() : 0,
        sign: function (step) {
          var message = "SKR1." + record.certificate + "." + step;
          return crypto.subtle.sign({ name: "Ed25519" }, record.privateKey, new TextEncoder().encode(message))
            .then(function (signature) { return { code: message + "." + b64(signature), step: step }; });
        },
      };
    });
  }

  // No Ed25519 here: the server makes the key and signs each step for this page.
  function serverSigner(box) {
    return post(box.dataset.credentialUrl, {}).then(function (credential) {
      return {
        offline: false,
        stepSeconds: credential.stepSeconds,
        offsetMs: credential.serverTimeMs - Date.now(),
        sign: function () {
          return fetch(box.dataset.liveUrl, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
            .then(function (response) {
              if (!response.ok) throw new Error("live code " + response.status);
              return response.json();
            });
        },
      };
    });
  }

  function show(box, signer, signed) {
    var image = box.querySelector(".live-code-image");
    image.replaceChildren(window.SeatkeeperQR.svg(signed.code, box.dataset.label));
    box.dataset.code = signed.code;
    box.dataset.step = String(signed.step);
    box.querySelector(".live-code-state").textContent =
      interpolate(signer.offline ? text.offline : text.live, [signer.stepSeconds]);
  }

  function run(box, signer) {
    var stepMs = signer.stepSeconds * 1000, shown = null;
    function tick() {
      var now = Date.now() + signer.offsetMs;
      var step = Math.floor(now / stepMs);
      var next = function () { setTimeout(tick, stepMs - (now % stepMs) + 50); };
      if (step === shown) return next();
      signer.sign(step).then(function (signed) {
        shown = step;
        show(box, signer, signed);
        next();
      }, function () { setTimeout(tick, 2000); });
    }
    tick();
  }

  boxes.forEach(function (box) {
    var ed25519 = window.crypto && crypto.subtle && window.indexedDB
      ? crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign"]).then(function () { return true; }, function () { return false; })
      : Promise.resolve(false);
    ed25519.then(function (supported) {
      return supported ? deviceSigner(box) : serverSigner(box);
    }).then(function (signer) { run(box, signer); }, function () {
      box.querySelector(".live-code-state").textContent = text.failed;
    });
  });
})();
