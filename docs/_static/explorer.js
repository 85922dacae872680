// trnkb explorer: sort, filter, choose columns, unit toggles, provenance, permalink,
// CSV download of the view, a scatter of any two columns. No library, no network.
(function () {
  "use strict";
  var root = document.getElementById("trnkb-explorer");
  var dataEl = document.getElementById("ex-data");
  if (!root || !dataEl) return;
  var DATA = JSON.parse(dataEl.textContent);
  var $ = function (id) { return document.getElementById(id); };
  // Columns hidden until chosen, so the headline ones fit a laptop screen.
  var HIDDEN = {chips: ["process_node", "dense_mxfp4", "scaleout_bandwidth", "bytes_per_flop",
                        "usd_per_pflop_hour"], domains: ["cooling"]};
  var AXES = {chips: ["dense_bf16", "hbm_bandwidth"], domains: ["domain_bf16", "domain_hbm_bandwidth"]};
  var DEFAULTS = {view: "chips", cls: "accelerator", vendor: "", status: "", year: "", q: "",
                  sort: "", dir: -1, flops: "", mem: "GB", cols: "", x: "", y: "", log: ""};
  var state = {};
  var FLOPS = {"TFLOPS": 1e12, "PFLOPS": 1e15, "TFLOP/s": 1e12, "PFLOP/s": 1e15, "EFLOP/s": 1e18};
  var BYTES = {"GB": 1e9, "TB": 1e12, "GiB": Math.pow(2, 30), "TiB": Math.pow(2, 40)};
  var focusAt = null;  // [row index, column index] of the focused cell, kept across renders

  function reset() { Object.keys(DEFAULTS).forEach(function (k) { state[k] = DEFAULTS[k]; }); }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function num(x) {
    if (x === null || x === undefined || !isFinite(x)) return "\u2014";
    return Number(x.toPrecision(4)).toLocaleString("en-US", {maximumSignificantDigits: 4});
  }
  function flopsUnit() { return state.flops || DATA[state.view].flops || "TFLOP/s"; }
  function columns() { return DATA[state.view].columns; }
  function shownFields() {
    if (state.cols) return state.cols.split(",");
    var hide = HIDDEN[state.view] || [];
    return columns().map(function (c) { return c.field; })
      .filter(function (f) { return hide.indexOf(f) < 0; });
  }
  function visibleColumns() {
    var on = shownFields();
    return columns().filter(function (c) { return on.indexOf(c.field) >= 0; });
  }
  // Value of a cell in the unit the toggles choose, and that unit.
  function shown(col, cell) {
    if (!cell || cell.v === null) return {v: null, u: unitOf(col)};
    if (col.family === "flops" && FLOPS[col.unit]) {
      return {v: cell.v * FLOPS[col.unit] / FLOPS[flopsUnit()], u: flopsUnit()};
    }
    if (col.family === "bytes" && BYTES[col.unit]) {
      return {v: cell.v * BYTES[col.unit] / BYTES[unitOf(col)], u: unitOf(col)};
    }
    return {v: cell.v, u: unitOf(col)};
  }
  function unitOf(col) {
    if (col.family === "flops" && FLOPS[col.unit]) return flopsUnit();
    if (col.family === "bytes" && BYTES[col.unit]) {
      var big = col.unit.charAt(0) === "T";
      return state.mem === "GiB" ? (big ? "TiB" : "GiB") : (big ? "TB" : "GB");
    }
    return col.unit === "TFLOPS" ? "TFLOP/s" : col.unit === "PFLOPS" ? "PFLOP/s" : col.unit;
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
    if (cell.lab) t += "\nvendor label: " + cell.lab;
    if (cell.q) t += "\nqualifier: " + cell.q;
    (cell.c || []).forEach(function (c) { t += "\nconflict: " + c.other + " (" + c.source + ", " + c.type + ")"; });
    return t;
  }
  function yearOf(r) { return r.cells.year && r.cells.year.v !== null ? String(Math.round(r.cells.year.v)) : "none"; }
  function passes(r, skip) {
    var c = r.cells, q = state.q.toLowerCase();
    if (skip !== "cls" && state.view === "chips" && state.cls && r.cls !== state.cls) return false;
    if (state.vendor && !(c.vendor && c.vendor.t === state.vendor)) return false;
    if (state.status && !(c.status && c.status.t === state.status)) return false;
    if (skip !== "year" && state.view === "chips" && state.year && yearOf(r) !== state.year) return false;
    if (q) {
      var hay = (r.name + " " + r.id + " " + Object.keys(c).map(function (k) {
        return c[k] && c[k].t ? c[k].t : ""; }).join(" ")).toLowerCase();
      if (hay.indexOf(q) < 0) return false;
    }
    return true;
  }
  function rowsOf() { return DATA[state.view].rows.filter(function (r) { return passes(r); }); }
  function options(id, values, labels) {
    var sel = $(id);
    sel.innerHTML = '<option value="">all</option>' + values.map(function (v, i) {
      return '<option value="' + esc(v) + '">' + esc(labels ? labels[i] : v) + "</option>"; }).join("");
  }
  function distinct(field) {
    var seen = {};
    DATA[state.view].rows.forEach(function (r) { var c = r.cells[field]; if (c) seen[c.t] = true; });
    return Object.keys(seen).sort();
  }
  function years() {
    var seen = {};
    DATA.chips.rows.forEach(function (r) { seen[yearOf(r)] = (seen[yearOf(r)] || 0) + 1; });
    var ys = Object.keys(seen).filter(function (y) { return y !== "none"; }).sort();
    if (seen.none) ys.push("none");
    return {values: ys, labels: ys.map(function (y) {
      return y === "none" ? "no year given (" + seen.none + ")" : y; })};
  }
  function colBoxes() {
    var on = shownFields();
    $("ex-colboxes").innerHTML = columns().map(function (c) {
      return '<label><input type="checkbox" data-col="' + esc(c.field) + '"' +
        (on.indexOf(c.field) >= 0 ? " checked" : "") + "> " + esc(c.label) +
        (c.derived ? " (computed)" : "") + "</label>";
    }).join(" ");
  }
  function marks(cell) {
    if (!cell || cell.k === "label") return "";
    var m = "";
    if (cell.k === "estimate") m += '<sup class="ex-mark" title="an estimate, not a reported figure">est</sup>';
    else if (cell.k === "derived") m += '<sup class="ex-mark" title="computed from other values">calc</sup>';
    if (cell.q) m += '<sup class="ex-mark" title="qualified: ' + esc(cell.q) + '">q</sup>';
    if (cell.lab) m += ' <span class="ex-label" title="the vendor\u2019s label">(' + esc(cell.lab) + ")</span>";
    if (cell.q && !cell.f) m += ' <span class="ex-qualifier">(' + esc(cell.q) + ")</span>";
    if (cell.c) m += ' <span class="ex-conflict" title="sources disagree">\u26a0</span>';
    return m;
  }
  function render() {
    var view = DATA[state.view], cols = visibleColumns(), chips = state.view === "chips";
    options("ex-vendor", distinct("vendor")); $("ex-vendor").value = state.vendor;
    options("ex-status", distinct("status")); $("ex-status").value = state.status;
    var ys = years();
    options("ex-year", chips ? ys.values : [], ys.labels);
    $("ex-year").value = state.year; $("ex-year").disabled = !chips;
    $("ex-cls").value = state.cls; $("ex-cls").disabled = !chips;
    $("ex-flops").value = flopsUnit(); $("ex-mem").value = state.mem;
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
    function th(field, label) {
      var sorted = state.sort === field;
      return '<th scope="col" data-field="' + field + '" class="ex-sort" aria-sort="' +
        (sorted ? (state.dir > 0 ? "ascending" : "descending") : "none") + '">' +
        '<button type="button" class="ex-sortbtn" data-field="' + field + '">' + label +
        (sorted ? (state.dir > 0 ? " \u25b2" : " \u25bc") : "") + "</button></th>";
    }
    var head = "<thead><tr>" + th("name", chips ? "chip" : "scale-up domain");
    cols.forEach(function (c) {
      var u = unitOf(c);
      head += th(c.field, esc(c.label) + (u ? " (" + esc(u) + ")" : ""));
    });
    head += "</tr></thead>";
    // a column with any number in it is right-aligned throughout, its dashes included
    var numeric = {};
    cols.forEach(function (c) {
      numeric[c.field] = view.rows.some(function (r) {
        return r.cells[c.field] && r.cells[c.field].v !== null; });
    });
    var body = rows.map(function (r, i) {
      var tds = cols.map(function (c) {
        var cell = r.cells[c.field];
        var cls = [cell ? (cell.v !== null ? "num" : "") : "ex-missing"];
        if (numeric[c.field] && !(cell && cell.v !== null)) cls.push("num");
        if (cell && (cell.k === "estimate" || cell.k === "derived")) cls.push("ex-k-" + cell.k);
        if (cell && cell.q) cls.push("ex-q-mark");
        return '<td class="' + cls.join(" ").trim() + '" tabindex="-1" data-row="' + esc(r.id) +
          '" data-field="' + c.field + '" title="' + esc(tip(cell)) + '">' + esc(text(c, cell)) +
          marks(cell) + "</td>";
      }).join("");
      var hi = isTrn3(r) ? ' class="ex-trn3"' : "";
      return "<tr" + hi + '><th scope="row" tabindex="-1" title="' + esc(r.full + " (" + r.id + ")") + '">' +
        esc(r.name) + "</th>" + tds + "</tr>";
    }).join("");
    $("ex-table").innerHTML = head + "<tbody>" + body + "</tbody>";
    roving(focusAt ? focusAt[0] : 0, focusAt ? focusAt[1] : 0);
    $("ex-count").textContent = count(rows);
    $("ex-memnote").textContent = chips && shownFields().some(function (f) {
      return f === "hbm_capacity" || f === "hbm_physical"; }) ? DATA.memory_note : "";
    colBoxes();
    scatter(rows);
    var hash = "#" + permalink();
    $("ex-permalink").setAttribute("href", hash);
    if (location.hash !== hash && history.replaceState) history.replaceState(null, "", hash);
  }
  function count(rows) {
    var all = DATA[state.view].rows, out = rows.length + " of " + all.length + " rows";
    if (state.view !== "chips") return out;
    var other = all.filter(function (r) { return passes(r, "cls") && !passes(r); }).length;
    if (state.cls && other) {
      out += "; " + other + " " + (state.cls === "CPU" ? "accelerators" : "CPUs") + " left out by Kind";
    }
    var noYear = all.filter(function (r) { return passes(r, "year") && yearOf(r) === "none"; }).length;
    if (state.year && state.year !== "none" && noYear) {
      out += "; " + noYear + " rows give no year and are left out by the year filter " +
        "(choose \u201cno year given\u201d to see them)";
    } else if (!state.year && noYear) {
      out += " (" + noYear + " give no year)";
    }
    return out;
  }
  function isTrn3(r) {
    return r.id === "trainium3" || (r.cells.chip && /Trainium3/.test(r.cells.chip.t || ""));
  }
  function permalink() {
    return Object.keys(state).filter(function (k) { return state[k] !== DEFAULTS[k] || k === "view"; })
      .map(function (k) { return k + "=" + encodeURIComponent(state[k]); }).join("&");
  }
  function fromHash() {
    reset();
    var seen = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i < 0) return;
      var k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
      if (k in state) { state[k] = k === "dir" ? (v === "1" ? 1 : -1) : v; seen[k] = true; }
    });
    if (!DATA[state.view]) state.view = "chips";
    // an old permalink naming a vendor or a sort only: keep its rows whatever their kind
    if (!seen.cls && (seen.vendor || seen.q)) state.cls = "";
    $("ex-view").value = state.view; $("ex-q").value = state.q; $("ex-log").checked = !!state.log;
  }
  function detail(td) {
    var r = DATA[state.view].rows.filter(function (x) { return x.id === td.dataset.row; })[0];
    var col = columns().filter(function (c) { return c.field === td.dataset.field; })[0];
    if (!r || !col) return;
    var cell = r.cells[col.field], out = "<strong>" + esc(r.name) + " \u00b7 " + esc(col.label) + "</strong>: ";
    var link = function (s) {
      return s.split(" + ").map(function (x) {
        return '<a class="trnkb-source" href="sources.html#src-' + esc(x) + '">' + esc(x) + "</a>"; }).join(" + ");
    };
    if (!cell) out += "no source gives this.";
    else if (cell.k === "label") out += esc(cell.t) + " (a label, not a sourced value).";
    else {
      var s = shown(col, cell);
      out += esc(cell.v !== null ? num(s.v) + " " + s.u : cell.t) + ". ";
      if (cell.f) {
        out += "Computed: " + esc(cell.f) + " (kind: " + esc(cell.k) + "). Inputs: " +
          cell["in"].map(function (i) {
            return esc(i.field) + " = " + esc(i.value) + " (" + link(i.source) + ", " + esc(i.kind) +
              (i.qualifier ? ", " + esc(i.qualifier) : "") + ")"; }).join("; ") + ".";
        if (cell.lab) out += " The vendor's label: " + esc(cell.lab) + ". " + esc(DATA.memory_note);
      } else {
        out += "Source: " + link(cell.s) + " (" + esc(cell.k) + (cell.l ? "; " + esc(cell.l) : "") + ").";
      }
      if (cell.q) out += " Qualified by the source: " + esc(cell.q) + ".";
      (cell.c || []).forEach(function (c) {
        out += '<br><span class="ex-conflict">\u26a0</span> Conflict (' + esc(c.type) + "): " +
          esc(c.other) + " from " + link(c.source) + (c.diff !== null ? ", " + num(100 * c.diff) + "% apart" : "") + ".";
      });
    }
    $("ex-detail").innerHTML = out;
  }
  // Keyboard: one cell of the table is in the tab order; arrow keys move it.
  function cellAt(ri, ci) {
    var tr = $("ex-table").tBodies[0] && $("ex-table").tBodies[0].rows[ri];
    return tr ? tr.cells[ci] || null : null;
  }
  function roving(ri, ci) {
    var body = $("ex-table").tBodies[0];
    if (!body || !body.rows.length) return null;
    ri = Math.max(0, Math.min(ri, body.rows.length - 1));
    ci = Math.max(0, Math.min(ci, body.rows[ri].cells.length - 1));
    [].forEach.call($("ex-table").querySelectorAll('tbody [tabindex="0"]'), function (e) { e.tabIndex = -1; });
    var c = cellAt(ri, ci);
    c.tabIndex = 0;
    return c;
  }
  $("ex-table").addEventListener("keydown", function (e) {
    var c = e.target.closest("tbody td, tbody th");
    if (!c) return;
    var ri = c.parentNode.sectionRowIndex, ci = c.cellIndex;
    var moves = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
                 Home: [0, -ci], End: [0, 999]};
    if (moves[e.key]) {
      var n = roving(ri + moves[e.key][0], ci + moves[e.key][1]);
      if (n) { n.focus(); focusAt = [n.parentNode.sectionRowIndex, n.cellIndex]; }
      e.preventDefault();
    } else if ((e.key === "Enter" || e.key === " ") && c.dataset.row) {
      detail(c);
      e.preventDefault();
    }
  });
  root.addEventListener("click", function (e) {
    var th = e.target.closest("th.ex-sort");
    if (th) {
      var f = th.dataset.field;
      state.dir = state.sort === f ? -state.dir : (f === "name" ? 1 : -1);
      state.sort = f;
      render();
      var b = $("ex-table").querySelector('button[data-field="' + f + '"]');
      if (b && e.detail === 0) b.focus();  // a keyboard press keeps focus on the header
      return;
    }
    var td = e.target.closest("td[data-row]");
    if (td) { detail(td); roving(td.parentNode.sectionRowIndex, td.cellIndex); }
  });
  ["view", "cls", "vendor", "status", "year", "flops", "mem", "x", "y"].forEach(function (k) {
    $("ex-" + k).addEventListener("change", function (e) {
      state[k] = e.target.value;
      if (k === "view") {
        var v = state.view; reset(); state.view = v;
      }
      render();
    });
  });
  $("ex-log").addEventListener("change", function (e) { state.log = e.target.checked ? "1" : ""; render(); });
  $("ex-colboxes").addEventListener("change", function (e) {
    var f = e.target.dataset.col;
    if (!f) return;
    var on = shownFields().filter(function (x) { return x !== f; });
    if (e.target.checked) on.push(f);
    var order = columns().map(function (c) { return c.field; });
    state.cols = order.filter(function (x) { return on.indexOf(x) >= 0; }).join(",") || "name";
    render();
    var box = $("ex-colboxes").querySelector('input[data-col="' + f + '"]');
    if (box) box.focus();
  });
  $("ex-q").addEventListener("input", function (e) { state.q = e.target.value; render(); });
  $("ex-download").addEventListener("click", function () {
    var cols = visibleColumns(), rows = $("ex-table").tBodies[0].rows;
    var csvCell = function (s) { s = String(s); return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s; };
    var lines = [["id", "name"].concat(cols.map(function (c) {
      var u = unitOf(c); return c.label + (u ? " (" + u + ")" : ""); })).map(csvCell).join(",")];
    [].forEach.call(rows, function (tr) {
      var id = tr.cells[1] ? tr.cells[1].dataset.row : "";
      var r = DATA[state.view].rows.filter(function (x) { return x.id === id; })[0];
      if (!r) return;
      lines.push([r.id, r.name].concat(cols.map(function (c) {
        var cell = r.cells[c.field];
        if (!cell) return "";
        if (cell.v === null) return cell.t;
        var v = c.family === "year" ? Math.round(cell.v) : shown(c, cell).v;
        return String(Number(v.toPrecision(6)));
      })).map(csvCell).join(","));
    });
    var blob = new Blob([lines.join("\n") + "\n"], {type: "text/csv"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "trnkb-explorer-" + state.view + ".csv";
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  });
  // Scatter: any two numeric columns of the rows shown; Trainium3 highlighted.
  function scatter(rows) {
    var cols = columns().filter(function (c) {
      return c.family !== "year" && DATA[state.view].rows.some(function (r) {
        return r.cells[c.field] && r.cells[c.field].v !== null; }); });
    var fields = cols.map(function (c) { return c.field; });
    var x = fields.indexOf(state.x) >= 0 ? state.x : AXES[state.view][0];
    var y = fields.indexOf(state.y) >= 0 ? state.y : AXES[state.view][1];
    ["ex-x", "ex-y"].forEach(function (id, i) {
      $(id).innerHTML = cols.map(function (c) {
        var u = unitOf(c);
        return '<option value="' + c.field + '">' + esc(c.label) + (u ? " (" + esc(u) + ")" : "") + "</option>";
      }).join("");
      $(id).value = i ? y : x;
    });
    var cx = cols[fields.indexOf(x)], cy = cols[fields.indexOf(y)], log = !!state.log;
    var pts = [], skipped = 0;
    rows.forEach(function (r) {
      var a = shown(cx, r.cells[x]).v, b = shown(cy, r.cells[y]).v;
      if (a === null || b === null || (log && (a <= 0 || b <= 0))) { skipped++; return; }
      pts.push({r: r, x: a, y: b});
    });
    var W = 720, H = 420, L = 70, R = 20, T = 20, B = 50;
    var f = function (v) { return log ? Math.log10(v) : v; };
    var ext = function (k) {
      var vs = pts.map(function (p) { return f(p[k]); });
      var lo = Math.min.apply(null, vs), hi = Math.max.apply(null, vs);
      if (!log) lo = Math.min(0, lo);
      if (hi === lo) { hi += 1; lo -= log ? 1 : 0; }
      return [lo, hi + (hi - lo) * 0.05];
    };
    var svg = '<svg role="img" width="' + W + '" height="' + H + '" viewBox="0 0 ' + W + " " + H +
      '" aria-labelledby="ex-scatter-desc"><desc id="ex-scatter-desc">' + esc(cx.label) + " against " +
      esc(cy.label) + ", " + pts.length + " points</desc>";
    if (pts.length) {
      var ex = ext("x"), ey = ext("y");
      var sx = function (v) { return L + (f(v) - ex[0]) / (ex[1] - ex[0]) * (W - L - R); };
      var sy = function (v) { return H - B - (f(v) - ey[0]) / (ey[1] - ey[0]) * (H - T - B); };
      var ticks = function (e) {
        var out = [];
        if (log) { for (var d = Math.ceil(e[0]); d <= e[1]; d++) out.push(Math.pow(10, d)); return out; }
        var step = Math.pow(10, Math.floor(Math.log10((e[1] - e[0]) / 4)));
        while ((e[1] - e[0]) / step > 6) step *= 2;
        for (var t = Math.ceil(e[0] / step) * step; t <= e[1]; t += step) out.push(t);
        return out;
      };
      svg += '<g class="ex-axis">';
      ticks(ex).forEach(function (t) {
        svg += '<line x1="' + sx(t) + '" x2="' + sx(t) + '" y1="' + T + '" y2="' + (H - B) + '"/>' +
          '<text x="' + sx(t) + '" y="' + (H - B + 16) + '" text-anchor="middle">' + num(t) + "</text>"; });
      ticks(ey).forEach(function (t) {
        svg += '<line x1="' + L + '" x2="' + (W - R) + '" y1="' + sy(t) + '" y2="' + sy(t) + '"/>' +
          '<text x="' + (L - 6) + '" y="' + (sy(t) + 4) + '" text-anchor="end">' + num(t) + "</text>"; });
      svg += '<text x="' + ((L + W - R) / 2) + '" y="' + (H - 10) + '" text-anchor="middle" class="ex-axis-title">' +
        esc(cx.label + " (" + unitOf(cx) + ")") + "</text>" +
        '<text transform="translate(14,' + ((T + H - B) / 2) + ') rotate(-90)" text-anchor="middle" class="ex-axis-title">' +
        esc(cy.label + " (" + unitOf(cy) + ")") + "</text></g>";
      pts.sort(function (a, b) { return isTrn3(a.r) - isTrn3(b.r); });  // Trainium3 drawn last, on top
      pts.forEach(function (p) {
        var hi = isTrn3(p.r);
        svg += '<g class="ex-point' + (hi ? " ex-trn3" : "") + '"><circle cx="' + sx(p.x) + '" cy="' + sy(p.y) +
          '" r="' + (hi ? 7 : 4) + '"><title>' + esc(p.r.name) + ": " + num(p.x) + ", " + num(p.y) +
          "</title></circle><text x=\"" + (sx(p.x) + 8) + '" y="' + (sy(p.y) - 6) + '">' + esc(p.r.name) + "</text></g>";
      });
    }
    svg += "</svg>";
    $("ex-scatter").innerHTML = svg + '<p class="trnkb-caption">' + pts.length + " rows plotted" +
      (skipped ? "; " + skipped + " shown in the table lack " + (log ? "a positive " : "") + "x or y and are not plotted" : "") +
      ". Trainium3 is the large highlighted point.</p>";
    state.x = x === AXES[state.view][0] ? "" : x;
    state.y = y === AXES[state.view][1] ? "" : y;
  }
  window.addEventListener("hashchange", function () {
    if (location.hash === "#" + permalink()) return;
    fromHash();
    render();
  });
  fromHash();
  render();
})();
