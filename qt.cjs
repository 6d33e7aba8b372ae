const { Session } = require('chdb');
const s = new Session(process.argv[2]);
(async () => {
for (const sql of process.argv.slice(3)) {
  const t = performance.now();
  try { const r = await s.queryAsync(sql, { format: process.env.F || 'PrettyCompactMonoBlock' }); console.log(r.text().slice(0, 3000)); } catch (e) { console.log('ERR', String(e).slice(0, 500)); }
  console.log(`-- ${(performance.now() - t).toFixed(0)} ms`);
}
s.close();
})();
