/* The customers' venue plan (events/_seat_plan.html): fitted to the width when it opens, so
 * every seat of the widest row shows at once; zoom with the buttons or a two-finger pinch,
 * pan by scrolling, dragging with the mouse or one finger; the overview's buttons jump to a
 * section.  The zoom is CSS `zoom`, so seats keep real sizes for clicks, taps and layout.
 *
 * Without JavaScript the plan scrolls in its box as drawn, and the tools stay hidden.
 */
(function () {
  "use strict";
  var MIN = 0.3, MAX = 2.5, STEP = 1.25;

  function setUp(root) {
    var viewport = root.querySelector(".plan-viewport");
    var plan = viewport.querySelector(".venue-plan");
    var tools = root.querySelector(".plan-tools");
    var zoom = 1;
    var fitted = true;

    function naturalWidth() {
      plan.style.setProperty("--plan-zoom", "1");
      var width = plan.scrollWidth;
      plan.style.setProperty("--plan-zoom", String(zoom));
      return width;
    }
    function fitZoom() {
      var room = viewport.clientWidth - 2;
      return Math.max(MIN, Math.min(1, room / Math.max(1, naturalWidth())));
    }
    // Zoom about a point of the viewport (its centre unless a pinch says where), keeping
    // what is under that point in place.
    function zoomTo(value, originX, originY) {
      var next = Math.max(MIN, Math.min(MAX, value));
      var rect = viewport.getBoundingClientRect();
      var ox = originX === undefined ? rect.width / 2 : originX - rect.left;
      var oy = originY === undefined ? rect.height / 2 : originY - rect.top;
      var x = (viewport.scrollLeft + ox) / zoom, y = (viewport.scrollTop + oy) / zoom;
      zoom = next;
      plan.style.setProperty("--plan-zoom", String(zoom));
      root.dataset.zoom = zoom.toFixed(3);
      viewport.scrollLeft = x * zoom - ox;
      viewport.scrollTop = y * zoom - oy;
    }
    function fit() {
      fitted = true;
      zoomTo(fitZoom());
      viewport.scrollLeft = 0;
      viewport.scrollTop = 0;
    }

    tools.hidden = false;
    tools.addEventListener("click", function (event) {
      var button = event.target.closest("button");
      if (!button) return;
      if (button.dataset.zoom === "in") { fitted = false; zoomTo(zoom * STEP); }
      else if (button.dataset.zoom === "out") { fitted = false; zoomTo(zoom / STEP); }
      else if (button.dataset.zoom === "fit") fit();
      else if (button.dataset.jump) jump(button);
    });

    // The overview: bring a section into the viewport, at a zoom where it fits if it can.
    function jump(button) {
      var section = document.getElementById(button.dataset.jump);
      if (!section) return;
      fitted = false;
      var width = section.getBoundingClientRect().width / zoom;
      var wanted = Math.min(1, (viewport.clientWidth - 16) / Math.max(1, width));
      if (wanted < zoom) zoomTo(wanted);
      var v = viewport.getBoundingClientRect(), s = section.getBoundingClientRect();
      viewport.scrollLeft += s.left - v.left - Math.max(0, (v.width - s.width) / 2);
      viewport.scrollTop += s.top - v.top - 8;
      root.querySelectorAll(".plan-jump").forEach(function (b) {
        b.setAttribute("aria-current", b === button ? "true" : "false");
      });
      var first = section.querySelector("input.seat-input:not([disabled])");
      if (first) first.focus({ preventScroll: true });
    }

    // Two fingers pinch the plan (touch events: a pinch is one gesture of both); one finger
    // pans it by the browser's own scrolling (touch-action: pan-x pan-y); a mouse drags it.
    var pinch = null, drag = null;
    function spread(touches) {
      var a = touches[0], b = touches[1];
      return { d: Math.hypot(a.clientX - b.clientX, a.clientY - b.clientY),
               x: (a.clientX + b.clientX) / 2, y: (a.clientY + b.clientY) / 2 };
    }
    viewport.addEventListener("touchstart", function (event) {
      if (event.touches.length === 2) pinch = { start: spread(event.touches).d, zoom: zoom };
    }, { passive: true });
    viewport.addEventListener("touchmove", function (event) {
      if (!pinch || event.touches.length !== 2) return;
      event.preventDefault();
      var now = spread(event.touches);
      if (pinch.start > 0) { fitted = false; zoomTo(pinch.zoom * now.d / pinch.start, now.x, now.y); }
    }, { passive: false });
    viewport.addEventListener("touchend", function (event) {
      if (event.touches.length < 2) pinch = null;
    });
    viewport.addEventListener("pointerdown", function (event) {
      if (event.pointerType !== "mouse" || event.button !== 0 || event.target.closest("label, input, button")) return;
      drag = { x: event.clientX, y: event.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
    });
    viewport.addEventListener("pointermove", function (event) {
      if (!drag) return;
      var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 4) viewport.classList.add("dragging");
      viewport.scrollLeft = drag.left - dx;
      viewport.scrollTop = drag.top - dy;
    });
    function release() {
      if (drag) { viewport.classList.remove("dragging"); drag = null; }
    }
    ["pointerup", "pointercancel", "pointerleave"].forEach(function (type) {
      viewport.addEventListener(type, release);
    });
    // Ctrl + wheel (and a trackpad's pinch, which browsers send as one) zooms the plan only.
    viewport.addEventListener("wheel", function (event) {
      if (!event.ctrlKey) return;
      event.preventDefault();
      fitted = false;
      zoomTo(zoom * (event.deltaY < 0 ? 1.1 : 1 / 1.1), event.clientX, event.clientY);
    }, { passive: false });

    // The focused seat is always in view, whatever the zoom (keyboard moves across the plan).
    viewport.addEventListener("focusin", function (event) {
      if (event.target.classList && event.target.classList.contains("seat-input")) {
        event.target.scrollIntoView({ block: "nearest", inline: "nearest" });
      }
    });

    window.addEventListener("resize", function () { if (fitted) fit(); });
    fit();
    root.dataset.ready = "true";
  }

  document.querySelectorAll("[data-seat-plan]").forEach(setUp);
})();
