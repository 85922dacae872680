// trnkb planner: looks up serving and training results the Python workload model computed at
// build time (trnkb.site.serving_grid). Nothing is modelled here: the page selects among the
// stored results with the rules of trnkb.workload.fleet (operating_point, cost_target,
// plan_fleet), which tests check against the command line. No library, no network.
(function () {
  "use strict";
  var dataEl = document.getElementById("pl-data");
  if (!dataEl) return;
  var D = JSON.parse(dataEl.textContent), A = D.axes;
  var $ = function (id) { return document.getElementById(id); };
  var state = {model: A.model.indexOf("llama-3-1-70b") >= 0 ? "llama-3-1-70b" : A.model[0],
               system: A.system[0], precision: A.precision[A.precision.length - 1],
               lengths: A.lengths[0][0] + "/" + A.lengths[0][1], pricing: A.pricing[0],
               target: "20", ceiling: "2", power: "50",
               tokens: String(A.tokens[A.tokens.length - 1]), days: String(A.days[0])};
  var SELECTS = ["model", "system", "precision", "lengths", "pricing", "tokens", "days"];
  var NUMBERS = ["target", "ceiling", "power"];
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]; });
  }
  function num(x) {
    if (x === null || x === undefined || !isFinite(x)) return "\u2014";
    return Number(Number(x).toPrecision(3)).toLocaleString("en-US", {maximumSignificantDigits: 3});
  }
  function whole(x) { return Number(x).toLocaleString("en-US"); }  // counts: every digit
  function rng(v, f) { f = f || num; return f(v[1]) + " to " + f(v[2]); }
  function fill(id, values, labels) {
    $(id).innerHTML = values.map(function (v, i) {
      return '<option value="' + esc(v) + '">' + esc(labels ? labels[i] : v) + "</option>"; }).join("");
  }
  function tokensLabel(t) { return num(t / 1e12) + " trillion"; }
  fill("pl-model", A.model, A.model.map(function (m) { return A.model_names[m] || m; }));
  fill("pl-system", A.system);
  fill("pl-precision", A.precision);
  fill("pl-lengths", A.lengths.map(function (l) { return l[0] + "/" + l[1]; }),
       A.lengths.map(function (l) { return l[2]; }));
  fill("pl-pricing", A.pricing);
  fill("pl-tokens", A.tokens.map(String), A.tokens.map(tokensLabel));
  fill("pl-days", A.days.map(String));
  function gkey(parts) { return parts.map(function (p) { return String(p); }).join("|"); }
  function serveEntry() {
    var l = state.lengths.split("/");
    return D.serve[[state.model, state.system, state.precision, l[0], l[1]].join("|")];
  }
  function trainEntry() {
    return D.train[gkey([state.model, state.system, A.train_precision[0], Number(state.tokens),
                         Number(state.days)])];
  }
  function row(label, v, unit, movers, attr, f) {
    f = f || num;
    return "<tr" + (attr ? ' data-metric="' + esc(attr) + '"' : "") + '><th scope="row">' + esc(label) +
      '</th><td class="num pl-central">' + f(v[0]) + '</td><td class="num">' + rng(v, f) +
      "</td><td>" + esc(unit) + "</td><td>" + esc((movers || []).join(", ")) + "</td></tr>";
  }
  var HEAD = '<thead><tr><th scope="col">result</th><th scope="col">central</th>' +
    '<th scope="col">range</th><th scope="col">unit</th><th scope="col">moved most by</th></tr></thead>';
  function table(id, rows) { $(id).innerHTML = rows ? HEAD + "<tbody>" + rows + "</tbody>" : ""; }
  // trnkb.workload.fleet.operating_point: most tokens/s per chip meeting the target, else the
  // most interactive point
  function operating(pts, target) {
    var best = null;
    pts.forEach(function (p) {
      if (p.tokens_per_s_per_user[0] >= target &&
          (!best || p.tokens_per_s_per_chip[0] > best.tokens_per_s_per_chip[0])) best = p; });
    return best ? [best, true] : [pts[0], false];
  }
  function renderServe(e, view) {
    var t = Number(state.target);
    if (!view.points) {
      table("pl-serve-table", ""); table("pl-power-table", ""); table("pl-cost-table", "");
      $("pl-curve").innerHTML = "";
      var why = "The model gives no answer here: " + (view.error || "no result");
      ["serve", "power", "cost"].forEach(function (s) { $("pl-" + s + "-summary").textContent = why; });
      return;
    }
    var op = operating(view.points, t), p = op[0];
    $("pl-serve-summary").textContent = (A.model_names[state.model] || state.model) + " on one replica of " +
      e.chips + " chips of " + state.system + " (" + state.precision + ", " + state.lengths +
      " tokens, " + state.pricing + " pricing): " + (op[1]
        ? "the operating point meeting \u2265 " + num(t) + " tokens/s per user is " + p.load + " concurrent client" + (p.load === 1 ? "." : "s.")
        : "no load reaches " + num(t) + " tokens/s per user; the most interactive point (" + p.load +
          " client) is shown.") + ((view.notes || []).length ? " Notes: " + view.notes.join("; ") + "." : "");
    table("pl-serve-table", D.metrics.map(function (m) {
      var v = p[m[0]];
      return v ? row(m[1], v, m[2], v[3], m[0]) : "";
    }).join(""));
    curve(view.points, t, p);
    // trnkb.workload.fleet.plan_fleet's arithmetic at that point
    var P = Number(state.power), per = D.systems[state.system].chips_per_rack, fw = p.facility_w;
    var chips = [fw[0], fw[2], fw[1]].map(function (w) { return Math.floor(P * 1e6 / w); });
    var racks = chips.map(function (c) { return Math.floor(c / per); });
    var tpm = p.tokens_per_s_per_mw;
    $("pl-power-summary").textContent = num(P) + " MW of facility power at " + (op[1] ? "\u2265 " + num(t) +
      " tokens/s per user" : "the most interactive point (target not reached)") + ", racks of " + per + " chips.";
    table("pl-power-table", P > 0 ? [
      row("racks", racks, "racks of " + per, ["chip_power", "pue"], "racks", whole),
      row("chips", chips, "chips", ["chip_power", "pue"], "chips", whole),
      row("fleet tokens/s", [tpm[0] * P, tpm[1] * P, tpm[2] * P], "tok/s", tpm[3], "fleet_tokens_per_s"),
      row("cost per million output tokens", p.usd_per_million_tokens, "USD/Mtok",
          p.usd_per_million_tokens[3], "usd_per_million_tokens")].join("") : "");
    // trnkb.workload.fleet.cost_target: highest tokens/s per user at or under the ceiling
    var c = Number(state.ceiling);
    function best(i) {
      var out = null, at = null;
      view.points.forEach(function (q) {
        var u = q.tokens_per_s_per_user[0];
        if (q.usd_per_million_tokens[i] <= c && (out === null || u > out)) { out = u; at = q; } });
      return [out, at];
    }
    var mid = best(0), lo = best(1), hi = best(2);
    $("pl-cost-summary").textContent = "At most " + num(c) + " USD per million output tokens (" + state.pricing +
      " pricing): " + (mid[0] === null ? "not reachable at the central inputs." : "up to " + num(mid[0]) +
      " tokens/s per user at the central inputs (" + mid[1].load + " clients).");
    function cell(b) { return b[0] === null ? "not reachable" : num(b[0]); }
    var at = mid[1] || view.points[0];
    $("pl-cost-table").innerHTML = '<thead><tr><th scope="col">tokens/s per user</th><th scope="col">central</th>' +
      '<th scope="col">optimistic</th><th scope="col">pessimistic</th><th scope="col">cost moved most by</th></tr></thead>' +
      '<tbody><tr data-metric="cost_target"><th scope="row">highest at or under the ceiling</th><td class="num pl-central">' +
      cell(mid) + '</td><td class="num">' + cell(lo) + '</td><td class="num">' + cell(hi) + "</td><td>" +
      esc(at.usd_per_million_tokens[3].join(", ")) + "</td></tr></tbody>";
  }
  function renderTrain() {
    var r = trainEntry();
    if (!r || r.error) {
      table("pl-train-table", "");
      $("pl-train-summary").textContent = "The model gives no training plan here: " + (r ? r.error : "no result");
      return;
    }
    $("pl-train-summary").textContent = (A.model_names[state.model] || state.model) + " on " +
      tokensLabel(Number(state.tokens)) + " tokens in " + state.days + " days on " + state.system + ": " +
      r.chips.toLocaleString("en-US") + " chips = " + r.racks + " racks of " + r.chips_per_rack +
      " (" + (r.precision || A.train_precision[0]) + ", plan " + r.plan + ").";
    table("pl-train-table", D.train_metrics.map(function (m) {
      return r[m[0]] ? row(m[1], r[m[0]], m[2], r[m[0]][3], m[0]) : ""; }).join(""));
  }
  function render() {
    SELECTS.concat(NUMBERS).forEach(function (k) { if ($("pl-" + k).value !== state[k]) $("pl-" + k).value = state[k]; });
    var e = serveEntry();
    if (!e) { renderServe({}, {error: "no result for this combination"}); }
    else if (e.error) { renderServe(e, e); }
    else { renderServe(e, e[state.pricing] || {error: "no " + state.pricing + " view"}); }
    renderTrain();
    var hash = "#" + Object.keys(state).map(function (k) { return k + "=" + encodeURIComponent(state[k]); }).join("&");
    $("pl-permalink").setAttribute("href", hash);
    if (location.hash !== hash && history.replaceState) history.replaceState(null, "", hash);
  }
  function curve(pts, target, chosen) {
    var W = 640, H = 360, L = 70, R = 20, T = 20, B = 50;
    var xs = pts.map(function (c) { return c.tokens_per_s_per_user[0]; });
    var ys = pts.map(function (c) { return c.tokens_per_s_per_chip[2]; });
    var xmax = Math.max.apply(null, xs.concat([target])) * 1.05, ymax = Math.max.apply(null, ys) * 1.05;
    var sx = function (v) { return L + v / xmax * (W - L - R); }, sy = function (v) { return H - B - v / ymax * (H - T - B); };
    var line = function (i) {
      return pts.map(function (c, k) { return (k ? "L" : "M") + sx(c.tokens_per_s_per_user[0]).toFixed(1) + "," +
        sy(c.tokens_per_s_per_chip[i]).toFixed(1); }).join(""); };
    var band = line(2) + pts.slice().reverse().map(function (c) {
      return "L" + sx(c.tokens_per_s_per_user[0]).toFixed(1) + "," + sy(c.tokens_per_s_per_chip[1]).toFixed(1); }).join("") + "Z";
    var svg = '<svg role="img" viewBox="0 0 ' + W + " " + H + '" width="100%" style="max-width:' + W +
      'px" aria-label="throughput against interactivity with its band">' +
      '<g class="ex-axis"><line x1="' + L + '" x2="' + (W - R) + '" y1="' + (H - B) + '" y2="' + (H - B) + '"/>' +
      '<line x1="' + L + '" x2="' + L + '" y1="' + T + '" y2="' + (H - B) + '"/>' +
      '<text x="' + ((L + W - R) / 2) + '" y="' + (H - 12) + '" text-anchor="middle">tokens/s per user (interactivity)</text>' +
      '<text transform="translate(16,' + ((T + H - B) / 2) + ') rotate(-90)" text-anchor="middle">tokens/s per chip</text>' +
      '<text x="' + L + '" y="' + (H - B + 16) + '" text-anchor="middle">0</text>' +
      '<text x="' + (W - R) + '" y="' + (H - B + 16) + '" text-anchor="end">' + num(xmax) + '</text>' +
      '<text x="' + (L - 6) + '" y="' + (T + 4) + '" text-anchor="end">' + num(ymax) + "</text></g>" +
      '<path class="pl-band" d="' + band + '" fill="#2563eb" fill-opacity="0.15" stroke="none"/>' +
      '<line x1="' + sx(target) + '" x2="' + sx(target) + '" y1="' + T + '" y2="' + (H - B) + '" stroke="#ea580c" stroke-dasharray="4 3"/>' +
      '<path d="' + line(0) + '" fill="none" stroke="#2563eb" stroke-width="2"/>' +
      pts.map(function (c) {
        var on = c === chosen;
        return '<g class="ex-point"><circle cx="' + sx(c.tokens_per_s_per_user[0]) + '" cy="' + sy(c.tokens_per_s_per_chip[0]) +
          '" r="' + (on ? 6 : 3) + '"' + (on ? ' fill="#ea580c"' : "") + "><title>" + c.load + " clients: " +
          num(c.tokens_per_s_per_user[0]) + " tok/s/user, " + num(c.tokens_per_s_per_chip[0]) + " tok/s/chip (" +
          rng(c.tokens_per_s_per_chip) + ")</title></circle></g>"; }).join("") + "</svg>";
    $("pl-curve").innerHTML = svg + '<p class="trnkb-caption">Throughput against interactivity: one point per ' +
      "load (1, 2, 4 ... concurrent clients), the line through the central values, the shaded band from the low " +
      "to the high end of tokens/s per chip; the dashed line is the target and the larger point the operating point. " +
      "Computed by the serving simulator at build time.</p>";
  }
  function fromHash() {
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0 && kv.slice(0, i) in state) state[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    });
  }
  SELECTS.forEach(function (k) {
    $("pl-" + k).addEventListener("change", function (ev) { state[k] = ev.target.value; render(); });
  });
  NUMBERS.forEach(function (k) {
    $("pl-" + k).addEventListener("input", function (ev) { state[k] = ev.target.value; render(); });
  });
  window.addEventListener("hashchange", function () { fromHash(); render(); });
  fromHash();
  render();
  // time from navigation to the first answer, read by bench/planner_bench.py
  $("trnkb-planner").setAttribute("data-ready-ms", performance.now().toFixed(0));
})();
