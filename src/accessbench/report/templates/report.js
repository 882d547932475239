// accessbench report: filters, sortable tables and chart highlighting. Vanilla JS, no
// network; without it the page shows everything, as the report drew it.
//
// A filter does not only hide: what is left is re-measured against itself. Step tables
// re-rank their verified rows and redo "× behind"; the verdict takes the fastest cell left
// and the next method left (their comparison made by the report, in #verdict-data); every
// chart with a value axis redraws it for the marks left, by the same rules as
// report/charts.py (1-2-5 ticks, a log scale past LOG_SCALE_ABOVE×, dots on a log scale);
// each latency panel colours its TOP_N fastest lines left.
(function () {
  "use strict";
  var KEYS = ["target", "version", "path", "method"];
  var SVG = "http://www.w3.org/2000/svg";
  function all(root, selector) { return Array.prototype.slice.call(root.querySelectorAll(selector)); }

  // --- numbers: formatting.py's forms and charts.py's scales -------------------------------
  var CHAR_W = 6.8, PAD = 8, TICK_GAP = 5, TICKS = 6, LOG_SCALE_ABOVE = 30, TEXT_DY = 4;
  var WHISKER_CAP = 4, DOT_R = 4.5, LEGEND_ROW_H = 17, X_AXIS_H = 40;

  function g3(v) { return String(Number(v.toPrecision(3))); }       // Python's "{:.3g}" (plain range)
  var FORMS = {
    rate: function (v) { return v >= 100 ? Math.round(v).toLocaleString("en-US") : g3(v); },
    seconds: g3,
    duration: function (ns) {
      var units = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"]];
      for (var i = 0; i < units.length; i++) {
        if (ns >= units[i][0] * 0.9995) return g3(ns / units[i][0]) + " " + units[i][1];
      }
      return g3(ns) + " ns";
    }
  };
  function tickText(form, v) { return v === 0 ? "0" : FORMS[form](v); }
  function textW(text) { return text.length * CHAR_W; }
  function px(v) { return String(Number(v.toFixed(2))); }

  function Scale(lo, hi, a, b, log) {
    var self = function (v) {
      var l = lo, h = hi;
      if (log) { l = Math.log10(lo); h = Math.log10(hi); v = Math.log10(Math.max(v, lo)); }
      return a + (v - l) / ((h - l) || 1) * (b - a);
    };
    self.lo = lo; self.hi = hi; self.a = a; self.b = b; self.log = log;
    self.ticks = function () { return log ? logTicks(lo, hi) : linearTicks(lo, hi); };
    return self;
  }
  function niceStep(span) {
    var raw = span / TICKS;
    if (raw <= 0) return 1;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 5, 10].map(function (m) { return m * power; }).find(function (s) { return s >= raw; });
  }
  function linearTicks(lo, hi) {
    var step = niceStep(hi - lo), first = Math.ceil(lo / step) * step, out = [];
    for (var i = 0; i < Math.floor((hi - first) / step + 1e-9) + 1; i++) out.push(first + i * step);
    return out;
  }
  function decades(lo, hi, steps) {
    var out = [];
    for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      steps.forEach(function (m) { out.push(m * Math.pow(10, e)); });
    }
    return out;
  }
  function logTicks(lo, hi) {
    var span = Math.log10(hi / lo);
    var steps = span < 1 ? [1, 1.5, 2, 3, 5, 7] : span <= 2.2 ? [1, 2, 5] : [1];
    return decades(lo, hi, steps).filter(function (t) { return lo * (1 - 1e-9) <= t && t <= hi * (1 + 1e-9); });
  }
  function niceMax(v) { var step = niceStep(v); return v > 0 ? Math.ceil(v / step - 1e-9) * step : 1; }
  function paddedLogRange(lo, hi) {
    var c = decades(lo, hi, [1, 2, 5]);
    var low = Math.max.apply(null, c.filter(function (v) { return v <= lo; }).concat([-Infinity]));
    var high = Math.min.apply(null, c.filter(function (v) { return v >= hi; }).concat([Infinity]));
    if (!isFinite(low)) low = lo;
    if (!isFinite(high)) high = hi;
    return high > low ? [low, high] : [low, low * 10];
  }
  function valueScale(values, a, b) {
    var positive = values.filter(function (v) { return v > 0; });
    if (positive.length) {
      var min = Math.min.apply(null, positive), max = Math.max.apply(null, positive);
      if (max / min > LOG_SCALE_ABOVE) { var r = paddedLogRange(min, max); return Scale(r[0], r[1], a, b, true); }
    }
    return Scale(0, niceMax(Math.max.apply(null, values.concat([0]))), a, b, false);
  }
  function logScale(values, a, b) {
    var positive = values.filter(function (v) { return v > 0; });
    var r = paddedLogRange(Math.min.apply(null, positive), Math.max.apply(null, positive));
    return Scale(r[0], r[1], a, b, true);
  }
  function readableTicks(ticks, scale, size) {
    function decade(t) { return scale.log && Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9; }
    var kept = [];
    ticks.slice().sort(function (p, q) { return decade(q) - decade(p); }).forEach(function (t) {
      var fits = kept.every(function (k) { return Math.abs(scale(t) - scale(k)) >= (size(t) + size(k)) / 2 + PAD; });
      if (fits) kept.push(t);
    });
    return kept.sort(function (p, q) { return p - q; });
  }

  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function shown(node) { return !node.classList.contains("off"); }

  // --- filters: hide every [data-filter] element whose target, server version, path or method is unticked ---
  var filters = document.getElementById("filters");
  var boxes = all(filters, "input[type=checkbox][data-key]");
  filters.hidden = false;

  function unticked() {
    var off = {};
    KEYS.forEach(function (k) { off[k] = new Set(); });
    boxes.forEach(function (b) { if (!b.checked) off[b.dataset.key].add(b.value); });
    return off;
  }
  // A cell's server version is its target's (#target-versions), not an attribute of its own.
  var VERSIONS = JSON.parse(document.getElementById("target-versions").textContent);
  function hiddenBy(off, data) {
    return KEYS.some(function (k) {
      var v = k === "version" && data.target !== undefined ? VERSIONS[data.target] : data[k];
      return v !== undefined && off[k].has(v);
    });
  }

  function apply() {
    var off = unticked();
    all(document, "[data-filter]").forEach(function (node) { node.classList.toggle("off", hiddenBy(off, node.dataset)); });
    all(document, "svg.chart-bars").forEach(redrawBars);
    all(document, "svg.chart-breakdown").forEach(restack);
    all(document, "svg[data-y-scale]").forEach(redrawLines);
    all(document, "table.cells").forEach(rerank);
    all(document, "#verdict tr[data-verdict]").forEach(function (row) { redoVerdict(row, off); });
    all(document, "button.show-rest").forEach(function (button) {   // how many lines are grey now
      var rest = all(button.parentNode.previousElementSibling, ".panel:not(.void) .series.rest").filter(shown);
      button.querySelector(".more").textContent = String(rest.length);
      button.parentNode.hidden = !rest.length;
    });
    all(document, "[data-count]").forEach(function (span) {
      var group = boxes.filter(function (b) { return b.dataset.key === span.dataset.count; });
      span.textContent = group.filter(function (b) { return b.checked; }).length + "/" + group.length;
    });
    // A table whose every row is filtered out says so, rather than leaving empty axes.
    all(document, "p.empty").forEach(function (p) {
      var rows = all(p.parentNode, "table tbody tr[data-filter]");
      p.hidden = !rows.length || rows.some(shown);
    });
    all(document, "section.step").forEach(function (section) {   // no cell left: no empty charts
      var rows = all(section, "table.cells tbody tr[data-filter]");
      section.classList.toggle("nothing", rows.length > 0 && !rows.some(shown));
    });
    remember();
  }

  // --- the filters live in the URL (#filter=method:c-sqlite,target:mariadb lists what is unticked),
  // so a filtered view can be bookmarked or sent; the page opens with the filters its URL names ---
  var PREFIX = "#filter=";

  function remember() {
    var offs = boxes.filter(function (b) { return !b.checked; }).map(function (b) {
      return encodeURIComponent(b.dataset.key) + ":" + encodeURIComponent(b.value);
    });
    var hash = offs.length ? PREFIX + offs.join(",") : "";
    if (hash !== location.hash && (hash || location.hash.indexOf(PREFIX) === 0)) {
      history.replaceState(null, "", location.pathname + location.search + hash);
    }
  }

  function restore() {
    if (location.hash.indexOf(PREFIX) !== 0) return;
    var offs = new Set(location.hash.slice(PREFIX.length).split(",").map(decodeURIComponent));
    boxes.forEach(function (b) { b.checked = !offs.has(b.dataset.key + ":" + b.value); });
    apply();
  }

  // --- row charts (bars, time breakdown): close the gaps left by hidden rows, and shrink ---
  function restack(svg) {
    var top = +svg.dataset.top, rowH = +svg.dataset.rowH, bottom = +svg.dataset.bottom, n = 0;
    all(svg, ":scope > g.row").forEach(function (g) {
      if (!shown(g)) return;
      g.setAttribute("transform", "translate(0," + (top + n * rowH) + ")");
      n += 1;
    });
    var end = top + n * rowH, height = end + bottom, width = svg.viewBox.baseVal.width;
    all(svg, ":scope > g.grid > line").forEach(function (l) { l.setAttribute("y2", end); });
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    return end;
  }

  // Bars: the value axis for the rows left (bars from 0, or dots on a log scale).
  function redrawBars(svg) {
    var end = restack(svg);
    var rows = all(svg, ":scope > g.row").filter(shown);
    if (!rows.length) return;
    var values = [];
    rows.forEach(function (g) {
      ["value", "low", "high"].forEach(function (k) { if (g.dataset[k] !== undefined) values.push(+g.dataset[k]); });
    });
    var x = valueScale(values, +svg.dataset.x0, +svg.dataset.x1), form = svg.dataset.form, top = +svg.dataset.top;
    svg.classList.toggle("log", x.log);
    var title = svg.querySelector(":scope > .axis-title");
    title.textContent = title.dataset.base + (x.log ? " · log scale, dots" : "");
    var grid = svg.querySelector(":scope > g.grid");
    grid.textContent = "";
    readableTicks(x.ticks(), x, function (t) { return textW(tickText(form, t)); }).forEach(function (t) {
      grid.appendChild(el("line", { x1: px(x(t)), x2: px(x(t)), y1: px(top - TICK_GAP), y2: px(end) }));
      grid.appendChild(el("text", { "class": "tick", x: px(x(t)), y: px(top - 2 * TICK_GAP), "text-anchor": "middle" },
        tickText(form, t)));
    });
    rows.forEach(function (g) {
      var v = +g.dataset.value, x0 = x(x.lo), x1 = x(Math.max(v, x.lo)), mid = +svg.dataset.rowH / 2;
      var rect = g.querySelector("rect"), dot = g.querySelector("circle.dot"), whisker = g.querySelector(".whisker");
      rect.setAttribute("x", px(x0));
      rect.setAttribute("width", px(Math.max(x1 - x0, 1)));
      dot.setAttribute("cx", px(x1));
      var stop = x1 + (x.log ? DOT_R : 0);
      if (whisker) {
        var lo = x(Math.max(+g.dataset.low, x.lo)), hi = x(+g.dataset.high);
        stop = Math.max(stop, hi);
        whisker.setAttribute("d", "M" + px(lo) + " " + px(mid) + "H" + px(hi) +
          "M" + px(lo) + " " + px(mid - WHISKER_CAP) + "V" + px(mid + WHISKER_CAP) +
          "M" + px(hi) + " " + px(mid - WHISKER_CAP) + "V" + px(mid + WHISKER_CAP));
      }
      g.querySelector("text.value").setAttribute("x", px(stop + PAD / 2));
    });
  }

  // Line charts (latency panels, sweeps): y (and a value x) for the series left; the panel's
  // TOP_N fastest left in colour; the legend closes its gaps; a panel with nothing left hides.
  function redrawLines(svg) {
    var series = all(svg, ":scope > g.series").filter(shown);
    var figure = svg.closest("figure.panel");
    if (figure) figure.classList.toggle("void", !series.length);
    if (!series.length) return;
    var topN = +svg.dataset.topN;
    series.forEach(function (s, i) { s.classList.toggle("rest", i >= topN); });
    var items = all(svg, ".legend-item");
    items.filter(shown).forEach(function (item, i) { item.classList.toggle("rest", i >= topN); });
    restackLegend(svg, items);

    var markers = [];
    series.forEach(function (s) { markers = markers.concat(all(s, "circle.marker")); });
    var ys = markers.map(function (m) { return +m.dataset.value; });
    var y0 = +svg.dataset.y0, y1 = +svg.dataset.y1, x0 = +svg.dataset.x0, x1 = +svg.dataset.x1;
    var y = svg.dataset.yScale === "log" && svg.dataset.yRule !== "value" ? logScale(ys, y0, y1) : valueScale(ys, y0, y1);
    var x = svg.dataset.xKind === "value"
      ? valueScale(markers.map(function (m) { return +m.dataset.xv; }), x0, x1)
      : Scale(+svg.dataset.xLo, +svg.dataset.xHi, x0, x1, svg.dataset.xScale === "log");
    var left = +svg.dataset.left, right = +svg.dataset.right;

    var yTitle = svg.querySelector(":scope > .y-title");
    yTitle.textContent = yTitle.dataset.base + (y.log ? " (log scale)" : "");
    var yGrid = svg.querySelector(":scope > g.y-grid");
    yGrid.textContent = "";
    readableTicks(y.ticks(), y, function () { return LEGEND_ROW_H; }).forEach(function (t) {
      yGrid.appendChild(el("line", { x1: px(left), x2: px(right), y1: px(y(t)), y2: px(y(t)) }));
      yGrid.appendChild(el("text", { "class": "tick", x: px(left - PAD / 2), y: px(y(t) + TEXT_DY), "text-anchor": "end" },
        tickText(svg.dataset.yForm, t)));
    });
    if (svg.dataset.xKind === "value") {
      var xGrid = svg.querySelector(":scope > g.x-grid"), form = svg.dataset.xForm;
      xGrid.textContent = "";
      readableTicks(x.ticks(), x, function (t) { return textW(tickText(form, t)); }).forEach(function (t) {
        xGrid.appendChild(el("line", { x1: px(x(t)), x2: px(x(t)), y1: px(y1), y2: px(y0 + TEXT_DY) }));
        xGrid.appendChild(el("text", { "class": "tick", x: px(x(t)), y: px(y0 + X_AXIS_H / 2 - 2), "text-anchor": "middle" },
          tickText(form, t)));
      });
      var xTitle = svg.querySelector(":scope > .x-title");
      if (xTitle) xTitle.textContent = xTitle.dataset.base + (x.log ? " (log scale)" : "");
    }
    series.forEach(function (s) {
      var points = all(s, "circle.marker").filter(function (m) { return +m.dataset.value > 0 || !y.log; });
      points.forEach(function (m) {
        m.setAttribute("cx", px(x(+m.dataset.xv)));
        m.setAttribute("cy", px(y(+m.dataset.value)));
      });
      s.querySelector("polyline").setAttribute("points", points.map(function (m) {
        return m.getAttribute("cx") + "," + m.getAttribute("cy");
      }).join(" "));
    });
  }

  function restackLegend(svg, items) {
    var legend = svg.querySelector(".legend");
    if (!legend) return;
    var perCol = +legend.dataset.perCol, colW = +legend.dataset.colW, n = 0;
    items.forEach(function (item, i) {
      if (!shown(item)) return;
      var dx = (Math.floor(n / perCol) - Math.floor(i / perCol)) * colW, dy = (n % perCol - i % perCol) * LEGEND_ROW_H;
      item.setAttribute("transform", "translate(" + px(dx) + "," + px(dy) + ")");
      n += 1;
    });
  }

  // --- step tables: rank the verified rows left by their figure, and redo "× behind" ---
  function rerank(table) {
    var higher = table.dataset.higher === "1";
    var rows = all(table, "tbody tr[data-ranked]").filter(shown);
    rows.sort(function (a, b) { return (+b.dataset.figure - +a.dataset.figure) * (higher ? 1 : -1); });
    if (!rows.length) return;
    var best = +rows[0].dataset.figure;
    rows.forEach(function (row, i) {
      var rank = row.querySelector("td.rank"), behind = row.querySelector("td.behind");
      var ratio = higher ? best / +row.dataset.figure : +row.dataset.figure / best;
      rank.textContent = String(i + 1);
      rank.dataset.sort = String(i + 1);
      behind.textContent = ratio.toFixed(2) + "×";
      behind.dataset.sort = String(ratio);
    });
  }

  // --- the verdict of the cells left: fastest verified cell and the next method's ---
  var verdictData = JSON.parse(document.getElementById("verdict-data").textContent);

  function redoVerdict(row, off) {
    var data = verdictData.verdicts[+row.dataset.verdict], texts = verdictData.texts;
    var left = [];
    data.cells.forEach(function (c, i) {
      if (!hiddenBy(off, { method: c[0], path: c[1], target: row.dataset.target })) left.push(i);
    });
    var td = row.querySelectorAll("td");
    if (!data.cells.length) return;            // no verified cell at all, filters or not: the report's text stands
    var among = left.length < data.cells.length ? verdictData.among : "";
    var best = left.length ? data.cells[left[0]] : null;
    var second = left.find(function (i) { return best && data.cells[i][0] !== best[0]; });
    var against, reason = "", significant = false;
    if (!best) {
      against = texts.none + among;
    } else if (second === undefined) {
      against = texts.alone + among;
    } else {
      var pair = data.pairs[left[0] + "," + second];
      against = pair[0]; reason = pair[1]; significant = !!pair[2];
    }
    td[2].textContent = best ? best[2] : against;
    td[3].textContent = best ? best[3] : "";
    td[3].dataset.sort = best ? best[4] : "";
    td[4].textContent = best ? against : "";
    td[4].title = reason;
    td[4].classList.toggle("muted", !significant);
  }

  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  restore();
  filters.querySelectorAll("button[data-all], button[data-none]").forEach(function (button) {
    button.addEventListener("click", function () {
      var key = button.dataset.all || button.dataset.none;
      boxes.forEach(function (b) { if (b.dataset.key === key) b.checked = !!button.dataset.all; });
      apply();
    });
  });
  document.getElementById("filters-reset").addEventListener("click", function () {
    boxes.forEach(function (b) { b.checked = true; });
    apply();
  });
  // One dropdown open at a time; a click elsewhere closes it.
  var dropdowns = filters.querySelectorAll("details.dropdown");
  document.addEventListener("click", function (e) {
    dropdowns.forEach(function (d) { if (!d.contains(e.target)) d.open = false; });
  });

  // --- sortable tables: click a header; numbers sort as numbers (data-sort holds the raw value) ---
  function sortKey(td) {
    return td.dataset.sort !== undefined ? td.dataset.sort : td.textContent.trim();
  }

  function sortBy(table, th, col) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var keyed = rows.map(function (r, i) { return { row: r, key: r.cells[col] ? sortKey(r.cells[col]) : "", i: i }; });
    var numeric = keyed.every(function (k) { return k.key === "" || isFinite(Number(k.key)); });
    keyed.sort(function (a, b) {
      // Empty values (not measured, not ranked) stay last whichever way the column sorts.
      if (a.key === "" || b.key === "") return (a.key === "") - (b.key === "") || a.i - b.i;
      var c = numeric ? Number(a.key) - Number(b.key)
        : a.key.localeCompare(b.key, undefined, { numeric: true, sensitivity: "base" });
      return c * dir || a.i - b.i;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, col) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, th, col); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th, col); }
      });
    });
  });

  // --- line charts: hovering a line or its legend entry picks it out; the rest on demand ---
  function highlight(svg, data) {
    svg.classList.add("hl");
    all(svg, ".series, .legend-item").forEach(function (s) {
      s.classList.toggle("on", KEYS.every(function (k) { return data[k] === s.dataset[k]; }));
    });
  }
  all(document, "svg.chart .legend-item, svg.chart .series").forEach(function (item) {
    var svg = item.closest("svg");
    item.addEventListener("mouseenter", function () { highlight(svg, item.dataset); });
    item.addEventListener("mouseleave", function () { svg.classList.remove("hl"); });
  });
  all(document, "button.show-rest").forEach(function (button) {
    var panels = button.parentNode.previousElementSibling;
    button.addEventListener("click", function () {
      var on = panels.classList.toggle("all");
      button.setAttribute("aria-pressed", String(on));
      button.querySelector(".label").textContent = on ? "grey beyond the fastest" : "colour every line";
    });
  });
})();
