export { REPO_ROOT, TEST_ROOT } from '@weft/harness';
