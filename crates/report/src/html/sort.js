// Sorts a table.sortable by the clicked column header (numbers by value,
// else text); a second click on the same header reverses the order. Kept
// small and dependency-free: the page's CSP admits exactly this script by
// its SHA-256, and nothing else.
for (const table of document.querySelectorAll('table.sortable')) {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, col) => {
    th.tabIndex = 0;
    th.setAttribute('aria-sort', 'none');
    const key = (tr) => {
      const cell = tr.cells[col];
      const text = cell ? (cell.dataset.v || cell.textContent).trim() : '';
      const n = parseFloat(text.replace(/[^0-9.eE+-]/g, ''));
      return /^[-+]?[0-9.]/.test(text) && !Number.isNaN(n) ? n : text.toLowerCase();
    };
    const sort = () => {
      const dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
      heads.forEach((h) => h.setAttribute('aria-sort', 'none'));
      th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
      const body = table.tBodies[0];
      const rows = [...body.rows].sort((a, b) => {
        const x = key(a);
        const y = key(b);
        if (typeof x === 'number' && typeof y === 'number') return dir * (x - y);
        return dir * String(x).localeCompare(String(y));
      });
      body.append(...rows);
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
    });
  });
}
