// trnkb planner: looks up serving results the Python workload model computed at build time.
// Nothing is modelled here. No library, no network.
(function () {
  "use strict";
  var dataEl = document.getElementById("pl-data");
  if (!dataEl) return;
  var D = JSON.parse(dataEl.textContent), A = D.axes;
  var $ = function (id) { return document.getElementById(id); };
  var state = {model: A.model.indexOf("llama-3-1-70b") >= 0 ? "llama-3-1-70b" : A.model[0],
               system: A.system[0], precision: A.precision[A.precision.length - 1],
               chips: String(A.chips[0]), lengths: A.lengths[0].join("/"), target: "20"};
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]; });
  }
  function num(x) {
    if (x === null || x === undefined || !isFinite(x)) return "\u2014";
    return Number(x.toPrecision(3)).toLocaleString("en-US", {maximumSignificantDigits: 3});
  }
  function fill(id, values, labels) {
    $(id).innerHTML = values.map(function (v, i) {
      return '<option value="' + esc(v) + '">' + esc(labels ? labels[i] : v) + "</option>"; }).join("");
  }
  fill("pl-model", A.model, A.model.map(function (m) { return A.model_names[m] || m; }));
  fill("pl-system", A.system);
  fill("pl-precision", A.precision);
  fill("pl-chips", A.chips.map(String));
  fill("pl-lengths", A.lengths.map(function (l) { return l.join("/"); }));
  function point() {
    var l = state.lengths.split("/");
    return D.points[[state.model, state.system, state.precision, state.chips, l[0], l[1]].join("|")];
  }
  function render() {
    ["model", "system", "precision", "chips", "lengths", "target"].forEach(function (k) { $("pl-" + k).value = state[k]; });
    var p = point();
    if (!p) { $("pl-table").innerHTML = ""; $("pl-summary").textContent = "no result for this combination"; return; }
    if (p.error) { $("pl-table").innerHTML = ""; $("pl-summary").textContent = "The model refuses this combination: " + p.error; $("pl-curve").innerHTML = ""; return; }
    var rows = D.metrics.map(function (m) {
      var v = p[m[0]];
      if (!v) return "";
      return '<tr data-metric="' + m[0] + '"><th scope="row">' + esc(m[1]) + '</th><td class="num pl-central">' + num(v[0]) +
        '</td><td class="num">' + num(v[1]) + " to " + num(v[2]) + "</td><td>" + esc(m[2]) +
        "</td><td>" + esc((p[m[0] + ":by"] || []).join(", ")) + "</td></tr>";
    }).join("");
    $("pl-table").innerHTML = '<thead><tr><th scope="col">metric</th><th scope="col">central</th>' +
      '<th scope="col">range</th><th scope="col">unit</th><th scope="col">moved most by</th></tr></thead><tbody>' + rows + "</tbody>";
    var t = Number(state.target), best = null;
    (p.curve || []).forEach(function (c) { if (c[1] >= t && (!best || c[2] > best[2])) best = c; });
    $("pl-summary").textContent = (A.model_names[state.model] || state.model) + " on " + state.chips + " chips of " +
      state.system + " (" + state.precision + ", batch " + A.batch + ", " + state.lengths + " tokens). " +
      (best ? "At \u2265 " + num(t) + " tokens/s per user the largest batch on the curve is " + best[0] +
        ", giving " + num(best[2]) + " tokens/s per chip (" + num(best[1]) + " per user)."
        : "No batch on the curve reaches " + num(t) + " tokens/s per user.");
    curve(p.curve || [], t);
    var hash = "#" + Object.keys(state).map(function (k) { return k + "=" + encodeURIComponent(state[k]); }).join("&");
    $("pl-permalink").setAttribute("href", hash);
    if (location.hash !== hash && history.replaceState) history.replaceState(null, "", hash);
  }
  function curve(pts, target) {
    if (!pts.length) { $("pl-curve").innerHTML = ""; return; }
    var W = 640, H = 360, L = 70, R = 20, T = 20, B = 50;
    var xs = pts.map(function (c) { return c[1]; }), ys = pts.map(function (c) { return c[2]; });
    var xmax = Math.max.apply(null, xs.concat([target])) * 1.05, ymax = Math.max.apply(null, ys) * 1.05;
    var sx = function (v) { return L + v / xmax * (W - L - R); }, sy = function (v) { return H - B - v / ymax * (H - T - B); };
    var path = pts.map(function (c, i) { return (i ? "L" : "M") + sx(c[1]).toFixed(1) + "," + sy(c[2]).toFixed(1); }).join("");
    var svg = '<svg role="img" width="' + W + '" height="' + H + '" aria-label="throughput against interactivity">' +
      '<g class="ex-axis"><line x1="' + L + '" x2="' + (W - R) + '" y1="' + (H - B) + '" y2="' + (H - B) + '"/>' +
      '<line x1="' + L + '" x2="' + L + '" y1="' + T + '" y2="' + (H - B) + '"/>' +
      '<text x="' + ((L + W - R) / 2) + '" y="' + (H - 12) + '" text-anchor="middle">tokens/s per user (interactivity)</text>' +
      '<text transform="translate(16,' + ((T + H - B) / 2) + ') rotate(-90)" text-anchor="middle">tokens/s per chip</text>' +
      '<text x="' + L + '" y="' + (H - B + 16) + '" text-anchor="middle">0</text>' +
      '<text x="' + (W - R) + '" y="' + (H - B + 16) + '" text-anchor="end">' + num(xmax) + '</text>' +
      '<text x="' + (L - 6) + '" y="' + (T + 4) + '" text-anchor="end">' + num(ymax) + "</text></g>" +
      '<line x1="' + sx(target) + '" x2="' + sx(target) + '" y1="' + T + '" y2="' + (H - B) + '" stroke="#ea580c" stroke-dasharray="4 3"/>' +
      '<path d="' + path + '" fill="none" stroke="#2563eb" stroke-width="2"/>' +
      pts.map(function (c) {
        return '<g class="ex-point"><circle cx="' + sx(c[1]) + '" cy="' + sy(c[2]) + '" r="3"><title>batch ' + c[0] +
          ": " + num(c[1]) + " tok/s/user, " + num(c[2]) + " tok/s/chip</title></circle></g>"; }).join("") + "</svg>";
    $("pl-curve").innerHTML = svg + '<p class="trnkb-caption">Throughput against interactivity, one point per batch ' +
      "size (central values); the dashed line is the target. Computed by trnkb.workload.serve at build time.</p>";
  }
  function fromHash() {
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0 && kv.slice(0, i) in state) state[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    });
  }
  ["model", "system", "precision", "chips", "lengths"].forEach(function (k) {
    $("pl-" + k).addEventListener("change", function (e) { state[k] = e.target.value; render(); });
  });
  $("pl-target").addEventListener("input", function (e) { state.target = e.target.value; render(); });
  window.addEventListener("hashchange", function () { fromHash(); render(); });
  fromHash();
  render();
})();
