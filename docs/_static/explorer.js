// trnkb explorer: sort, filter, unit toggles, provenance, permalink. No library, no network.
(function () {
  "use strict";
  var root = document.getElementById("trnkb-explorer");
  var dataEl = document.getElementById("ex-data");
  if (!root || !dataEl) return;
  var DATA = JSON.parse(dataEl.textContent);
  var $ = function (id) { return document.getElementById(id); };
  var state = {view: "chips", vendor: "", status: "", year: "", q: "", sort: "", dir: -1,
               flops: "TFLOP/s", mem: "GB"};
  var FLOPS = {"TFLOPS": 1e12, "PFLOPS": 1e15};
  var BYTES = {"GB": 1e9, "TB": 1e12, "GiB": Math.pow(2, 30), "TiB": Math.pow(2, 40)};

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function num(x) {
    if (x === null || x === undefined || !isFinite(x)) return "\u2014";
    var r = Number(x.toPrecision(4));
    return r.toLocaleString("en-US", {maximumFractionDigits: 3});
  }
  // Value of a cell in the unit the toggles choose, and that unit.
  function shown(col, cell) {
    if (!cell || cell.v === null) return {v: null, u: col.unit};
    if (col.family === "flops" && FLOPS[col.unit]) {
      var want = state.flops === "PFLOP/s" ? "PFLOPS" : "TFLOPS";
      return {v: cell.v * FLOPS[col.unit] / FLOPS[want], u: state.flops};
    }
    if (col.family === "bytes" && BYTES[col.unit]) {
      var big = col.unit.charAt(0) === "T";
      var unit = state.mem === "GiB" ? (big ? "TiB" : "GiB") : (big ? "TB" : "GB");
      return {v: cell.v * BYTES[col.unit] / BYTES[unit], u: unit};
    }
    return {v: cell.v, u: col.unit === "TFLOPS" ? "TFLOP/s" : col.unit === "PFLOPS" ? "PFLOP/s" : col.unit};
  }
  function text(col, cell) {
    if (!cell) return "\u2014";
    if (cell.v === null) return cell.t;
    if (col.family === "year") return String(Math.round(cell.v));
    return num(shown(col, cell).v);
  }
  function sortKey(row, field) {
    if (field === "name") return row.name.toLowerCase();
    var c = row.cells[field];
    if (!c) return null;
    return c.v !== null ? c.v : String(c.t).toLowerCase();
  }
  function tip(cell) {
    if (!cell) return "no source gives this";
    if (cell.k === "label") return "label (no source needed)";
    var t = "source: " + cell.s + " \u00b7 kind: " + cell.k + (cell.l ? " \u00b7 " + cell.l : "");
    if (cell.q) t += "\nqualifier: " + cell.q;
    (cell.c || []).forEach(function (c) { t += "\nconflict: " + c.other + " (" + c.source + ", " + c.type + ")"; });
    return t;
  }
  function rowsOf() {
    var q = state.q.toLowerCase();
    return DATA[state.view].rows.filter(function (r) {
      var c = r.cells;
      if (state.vendor && !(c.vendor && c.vendor.t === state.vendor)) return false;
      if (state.status && !(c.status && c.status.t === state.status)) return false;
      if (state.year && !(c.year && String(Math.round(c.year.v)) === state.year)) return false;
      if (q) {
        var hay = (r.name + " " + r.id + " " + Object.keys(c).map(function (k) {
          return c[k] && c[k].t ? c[k].t : ""; }).join(" ")).toLowerCase();
        if (hay.indexOf(q) < 0) return false;
      }
      return true;
    });
  }
  function options(id, values) {
    var sel = $(id), keep = sel.value;
    sel.innerHTML = '<option value="">all</option>' + values.map(function (v) {
      return '<option value="' + esc(v) + '">' + esc(v) + "</option>"; }).join("");
    sel.value = values.indexOf(keep) >= 0 ? keep : "";
  }
  function distinct(field, year) {
    var seen = {};
    DATA[state.view].rows.forEach(function (r) {
      var c = r.cells[field];
      if (c) seen[year ? String(Math.round(c.v)) : c.t] = true;
    });
    return Object.keys(seen).sort();
  }
  function render() {
    var view = DATA[state.view], cols = view.columns;
    options("ex-vendor", distinct("vendor")); $("ex-vendor").value = state.vendor;
    options("ex-status", distinct("status")); $("ex-status").value = state.status;
    options("ex-year", state.view === "chips" ? distinct("year", true) : []);
    $("ex-year").value = state.year; $("ex-year").disabled = state.view !== "chips";
    var rows = rowsOf();
    if (state.sort) {
      rows.sort(function (a, b) {
        var x = sortKey(a, state.sort), y = sortKey(b, state.sort);
        if (x === null && y === null) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : x > y ? 1 : 0) * state.dir;
      });
    }
    var head = '<thead><tr><th scope="col" data-field="name" class="ex-sort">' +
      (state.view === "chips" ? "chip" : "scale-up domain") + arrow("name") + "</th>";
    cols.forEach(function (c) {
      var u = shown(c, {v: 1}).u;
      head += '<th scope="col" data-field="' + c.field + '" class="ex-sort">' + esc(c.label) +
        (u ? " (" + esc(u) + ")" : "") + arrow(c.field) + "</th>";
    });
    head += "</tr></thead>";
    // a column with any number in it is right-aligned throughout, its dashes included
    var numeric = {};
    cols.forEach(function (c) {
      numeric[c.field] = view.rows.some(function (r) {
        return r.cells[c.field] && r.cells[c.field].v !== null; });
    });
    var body = rows.map(function (r) {
      var tds = cols.map(function (c) {
        var cell = r.cells[c.field];
        var cls = (cell ? (cell.v !== null ? "num" : "") : "ex-missing") +
          (numeric[c.field] && !(cell && cell.v !== null) ? (cell ? "num" : " num") : "");
        var badge = cell && cell.c ? ' <span class="ex-conflict" title="sources disagree">\u26a0</span>' : "";
        if (cell && cell.q) badge = ' <span class="ex-qualifier">(' + esc(cell.q) + ")</span>" + badge;
        return '<td class="' + cls + '" data-row="' + esc(r.id) + '" data-field="' + c.field +
          '" title="' + esc(tip(cell)) + '">' + esc(text(c, cell)) + badge + "</td>";
      }).join("");
      return '<tr><th scope="row" title="' + esc(r.full + " (" + r.id + ")") + '">' + esc(r.name) +
        "</th>" + tds + "</tr>";
    }).join("");
    $("ex-table").innerHTML = head + "<tbody>" + body + "</tbody>";
    $("ex-count").textContent = rows.length + " of " + view.rows.length + " rows";
    var hash = "#" + permalink();
    $("ex-permalink").setAttribute("href", hash);
    if (location.hash !== hash && history.replaceState) history.replaceState(null, "", hash);
  }
  function arrow(field) { return state.sort === field ? (state.dir > 0 ? " \u25b2" : " \u25bc") : ""; }
  function permalink() {
    return Object.keys(state).filter(function (k) { return state[k] !== "" && state[k] !== null; })
      .map(function (k) { return k + "=" + encodeURIComponent(state[k]); }).join("&");
  }
  function fromHash() {
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i < 0) return;
      var k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
      if (k in state) state[k] = k === "dir" ? (v === "1" ? 1 : -1) : v;
    });
    if (!DATA[state.view]) state.view = "chips";
  }
  function detail(td) {
    var r = DATA[state.view].rows.filter(function (x) { return x.id === td.dataset.row; })[0];
    var col = DATA[state.view].columns.filter(function (c) { return c.field === td.dataset.field; })[0];
    var cell = r.cells[col.field], out = "<strong>" + esc(r.name) + " \u00b7 " + esc(col.label) + "</strong>: ";
    if (!cell) out += "no source gives this.";
    else if (cell.k === "label") out += esc(cell.t) + " (a label, not a sourced value).";
    else {
      var s = shown(col, cell);
      out += esc(cell.v !== null ? num(s.v) + " " + s.u : cell.t) + ". Source: " +
        '<a class="trnkb-source" href="sources.html#src-' + esc(cell.s) + '">' + esc(cell.s) + "</a>" +
        " (" + esc(cell.k) + (cell.l ? "; " + esc(cell.l) : "") + ").";
      if (cell.q) out += " Qualified by the source: " + esc(cell.q) + ".";
      (cell.c || []).forEach(function (c) {
        out += '<br><span class="ex-conflict">\u26a0</span> Conflict (' + esc(c.type) + "): " +
          esc(c.other) + " from " + '<a class="trnkb-source" href="sources.html#src-' + esc(c.source) +
          '">' + esc(c.source) + "</a>" + (c.diff !== null ? ", " + num(100 * c.diff) + "% apart" : "") + ".";
      });
    }
    $("ex-detail").innerHTML = out;
  }
  root.addEventListener("click", function (e) {
    var th = e.target.closest("th.ex-sort");
    if (th) {
      var f = th.dataset.field;
      state.dir = state.sort === f ? -state.dir : (f === "name" ? 1 : -1);
      state.sort = f;
      render();
      return;
    }
    var td = e.target.closest("td[data-row]");
    if (td) detail(td);
  });
  ["view", "vendor", "status", "year", "flops", "mem"].forEach(function (k) {
    $("ex-" + k).addEventListener("change", function (e) {
      state[k] = e.target.value;
      if (k === "view") { state.vendor = state.status = state.year = state.sort = ""; }
      render();
    });
  });
  $("ex-q").addEventListener("input", function (e) { state.q = e.target.value; render(); });
  fromHash();
  $("ex-view").value = state.view; $("ex-q").value = state.q;
  $("ex-flops").value = state.flops; $("ex-mem").value = state.mem;
  render();
})();
