export { newDataDir, startWeft, type RunningWeft } from '@weft/harness';
