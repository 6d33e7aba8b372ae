import { mkdirSync, rmSync } from 'node:fs';
import { TEST_ROOT } from './paths';

/**
 * A fresh scratch directory for every run; each server and store gets a data dir beneath it.
 * Every project runs this; vitest runs all global setups before the first test file and all
 * teardowns after the last, so projects sharing the directory do not remove it from each other.
 */
export default function setup(): () => void {
  rmSync(TEST_ROOT, { recursive: true, force: true });
  mkdirSync(TEST_ROOT, { recursive: true });
  return () => {
    if (!process.env.WEFT_KEEP_TEST_DATA) rmSync(TEST_ROOT, { recursive: true, force: true });
  };
}
