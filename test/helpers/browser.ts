export { ARTIFACTS_DIR, ensureChromium, launchBrowser } from '@weft/harness';
