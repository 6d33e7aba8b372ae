import { startWeft } from '@weft/harness';
const w = await startWeft();
console.log(w.url);
process.on('SIGTERM', async () => {
  await w.stop();
  process.exit(0);
});
setInterval(() => {}, 1 << 30);
