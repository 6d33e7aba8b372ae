const { Session } = require('chdb');
const s = new Session(process.argv[2]);
const sql = process.argv[3];
s.queryAsync(sql, { format: 'PrettyCompactMonoBlock' }).then((r) => { console.log(r.text ? r.text() : (r.bytes ? Buffer.from(r.bytes()).toString() : String(r))); s.close(); });
