import { mkdirSync, rmSync } from 'node:fs';
import { TEST_ROOT } from './paths';

/** A fresh scratch directory for every run; each server gets a data dir beneath it. */
export default function setup(): () => void {
  rmSync(TEST_ROOT, { recursive: true, force: true });
  mkdirSync(TEST_ROOT, { recursive: true });
  return () => {
    if (!process.env.WEFT_KEEP_TEST_DATA) rmSync(TEST_ROOT, { recursive: true, force: true });
  };
}
