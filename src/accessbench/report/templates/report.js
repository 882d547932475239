// accessbench report: filters, sortable tables and chart highlighting. Vanilla JS, no
// network; without it the page shows everything, unsorted beyond the report's own order.
(function () {
  "use strict";
  var KEYS = ["target", "path", "method"];

  // --- filters: hide every [data-filter] element whose target, path or method is unticked ---
  var filters = document.getElementById("filters");
  var boxes = Array.prototype.slice.call(filters.querySelectorAll("input[type=checkbox][data-key]"));
  filters.hidden = false;

  function unticked() {
    var off = {};
    KEYS.forEach(function (k) { off[k] = new Set(); });
    boxes.forEach(function (b) { if (!b.checked) off[b.dataset.key].add(b.value); });
    return off;
  }

  function apply() {
    var off = unticked();
    document.querySelectorAll("[data-filter]").forEach(function (el) {
      var hide = KEYS.some(function (k) { return el.dataset[k] !== undefined && off[k].has(el.dataset[k]); });
      el.classList.toggle("off", hide);
    });
    document.querySelectorAll("svg[data-rows]").forEach(restack);
    document.querySelectorAll("[data-count]").forEach(function (span) {
      var group = boxes.filter(function (b) { return b.dataset.key === span.dataset.count; });
      var on = group.filter(function (b) { return b.checked; }).length;
      span.textContent = on + "/" + group.length;
    });
    // A table whose every row is filtered out says so, rather than leaving empty axes.
    document.querySelectorAll("p.empty").forEach(function (p) {
      var rows = p.parentNode.querySelectorAll("table tbody tr[data-filter]");
      p.hidden = !rows.length || Array.prototype.some.call(rows, function (r) { return !r.classList.contains("off"); });
    });
    remember();
  }

  // --- the filters live in the URL (#filter=method:c-sqlite,target:mariadb lists what is unticked),
  // so a filtered view can be bookmarked or sent; the page opens with the filters its URL names ---
  var PREFIX = "#filter=";

  function remember() {
    var off = boxes.filter(function (b) { return !b.checked; }).map(function (b) {
      return encodeURIComponent(b.dataset.key) + ":" + encodeURIComponent(b.value);
    });
    var hash = off.length ? PREFIX + off.join(",") : "";
    if (hash !== location.hash && (hash || location.hash.indexOf(PREFIX) === 0)) {
      history.replaceState(null, "", location.pathname + location.search + hash);
    }
  }

  function restore() {
    if (location.hash.indexOf(PREFIX) !== 0) return;
    var off = new Set(location.hash.slice(PREFIX.length).split(",").map(decodeURIComponent));
    boxes.forEach(function (b) { b.checked = !off.has(b.dataset.key + ":" + b.value); });
    apply();
  }

  // Row charts (bars, time breakdown): close the gaps left by hidden rows, and shrink.
  function restack(svg) {
    var top = +svg.dataset.top, rowH = +svg.dataset.rowH, bottom = +svg.dataset.bottom, n = 0;
    svg.querySelectorAll(":scope > g.row").forEach(function (g) {
      if (g.classList.contains("off")) return;
      g.setAttribute("transform", "translate(0," + (top + n * rowH) + ")");
      n += 1;
    });
    var end = top + n * rowH, height = end + bottom, width = svg.viewBox.baseVal.width;
    svg.querySelectorAll(":scope > g.grid > line").forEach(function (l) { l.setAttribute("y2", end); });
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
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

  // --- line charts: hovering a legend entry brings its lines forward ---
  document.querySelectorAll("svg.chart .legend-item").forEach(function (item) {
    var svg = item.closest("svg");
    item.addEventListener("mouseenter", function () {
      svg.classList.add("hl");
      svg.querySelectorAll(".series").forEach(function (s) {
        var match = KEYS.every(function (k) { return item.dataset[k] === undefined || item.dataset[k] === s.dataset[k]; });
        s.classList.toggle("on", match);
      });
    });
    item.addEventListener("mouseleave", function () { svg.classList.remove("hl"); });
  });
})();
