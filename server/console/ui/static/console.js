// The console's only script: it keeps the server-rendered page current
// from the server's event stream (/ui/events). Everything it writes goes
// through textContent or a checked attribute, never through HTML.
"use strict";
(function () {
  const src = document.body.dataset.events;
  if (!src || !window.EventSource) return;
  const fields = ["id", "kind", "head_t", "index_t", "gap_text", "status", "lease"];

  function rowsFor(id) {
    return Array.from(document.querySelectorAll("[data-id]")).filter((el) => el.dataset.id === id);
  }

  function fill(el, row) {
    for (const f of fields) {
      for (const cell of el.querySelectorAll('[data-f="' + f + '"]')) cell.textContent = row[f] || "";
    }
    for (const a of el.querySelectorAll('a[data-f="href"]')) {
      if (typeof row.href === "string" && row.href.startsWith("/ui/record/")) a.setAttribute("href", row.href);
    }
    if (el.tagName === "TR") {
      el.classList.toggle("retracted", !!row.retracted);
      el.classList.toggle("unreadable", !!row.unreadable);
      const gap = el.querySelector('[data-f="gap_text"]');
      if (gap) gap.classList.toggle("behind", row.gap > 0);
    }
  }

  // onThisPage reports whether a row belongs on this page of the records
  // table: its filter (ID prefix, kind, retracted) and its ID range when
  // there are pages before or after it.
  function onThisPage(table, row) {
    const d = table.dataset;
    if (d.prefix && !row.id.startsWith(d.prefix)) return false;
    if (d.kind && row.kind && row.kind !== d.kind) return false;
    if (row.retracted && !d.retracted) return false;
    if (d.first && row.id < d.first) return false;
    if (d.last && row.id > d.last) return false;
    return true;
  }

  // The records table: update the record's row, add one, or remove it when
  // it no longer belongs on the page.
  function updateTable(ch) {
    const table = document.getElementById("records");
    if (!table) return;
    const rows = rowsFor(ch.row.id).filter((el) => table.contains(el));
    if (ch.deleted || !onThisPage(table, ch.row)) {
      rows.forEach((el) => el.remove());
    } else if (rows.length) {
      rows.forEach((el) => fill(el, ch.row));
    } else {
      const tpl = document.getElementById("row-template");
      const tr = tpl.content.querySelector("tr").cloneNode(true);
      tr.dataset.id = ch.row.id;
      fill(tr, ch.row);
      const body = table.tBodies[0];
      const after = Array.from(body.rows).find((r) => r.dataset.id > ch.row.id);
      body.insertBefore(tr, after || null);
    }
    const count = document.getElementById("count");
    if (count) count.textContent = String(table.tBodies[0].rows.length);
  }

  // The lag chart: resize the record's bar.
  function updateChart(ch) {
    const chart = document.getElementById("lag");
    if (!chart) return;
    const bars = rowsFor(ch.row.id).filter((el) => chart.contains(el));
    if (!bars.length) return;
    let most = 1;
    for (const g of chart.querySelectorAll("g[data-id]")) {
      const gap = g === bars[0] ? ch.row.gap : Number(g.querySelector('[data-f="gap_text"]').textContent);
      most = Math.max(most, gap || 0);
    }
    for (const g of bars) {
      g.querySelector('[data-f="gap_text"]').textContent = ch.row.gap_text || "0";
      g.querySelector('[data-f="bar"]').setAttribute("width", String(Math.max(2, Math.round((600 * (ch.row.gap || 0)) / most))));
    }
  }

  // A record's page: its facts, its concern, and a line of history.
  function updateRecord(ch) {
    const facts = document.getElementById("facts");
    if (!facts) return;
    if (!ch.deleted) fill(facts, ch.row);
    const history = document.getElementById("history");
    const tr = document.createElement("tr");
    const cells = ch.deleted ? [new Date().toISOString(), "(purged)", "", ""] :
      [new Date().toISOString(), ch.change.concern, String(ch.change.v), ch.change.payload];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      if (i === 3) {
        const pre = document.createElement("pre");
        pre.textContent = text;
        td.appendChild(pre);
      } else {
        td.textContent = text;
      }
      if (i === 2) td.className = "n";
      tr.appendChild(td);
    });
    const empty = history.querySelector("tr.empty");
    if (empty) empty.remove();
    history.tBodies[0].appendChild(tr);
    if (ch.change) {
      const row = document.querySelector('#concerns tr[data-concern="' + ch.change.concern + '"]');
      if (row) {
        row.querySelector('[data-f="v"]').textContent = String(ch.change.v);
        row.querySelector('[data-f="payload"]').textContent = ch.change.payload;
      }
    }
  }

  const live = document.getElementById("live");
  const es = new EventSource(src);
  es.onopen = () => { live.hidden = false; };
  es.onerror = () => { live.hidden = true; };
  es.addEventListener("change", (e) => {
    let ch;
    try { ch = JSON.parse(e.data); } catch (_) { return; }
    if (!ch || !ch.row || typeof ch.row.id !== "string") return;
    updateTable(ch);
    updateChart(ch);
    updateRecord(ch);
  });
  // A page left behind (kept in the back/forward cache) would hold its
  // stream open, and a browser gives a host six connections over HTTP/1.1:
  // after six pages every new one waited for a stream to time out. Close it
  // when the page goes; a page brought back from the cache reloads, so its
  // rows are current again.
  window.addEventListener("pagehide", () => es.close());
  window.addEventListener("pageshow", (e) => { if (e.persisted) location.reload(); });
})();
