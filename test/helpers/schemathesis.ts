import { ensurePythonVenv } from './python-venv';

/** Pinned so every machine fuzzes with the same generator. */
export const SCHEMATHESIS_VERSION = '4.32.5';

/** The command line running schemathesis from its private virtualenv (see ensurePythonVenv). */
export async function ensureSchemathesis(): Promise<string[]> {
  const python = await ensurePythonVenv(`schemathesis-${SCHEMATHESIS_VERSION}`, [`schemathesis==${SCHEMATHESIS_VERSION}`]);
  return [python, '-m', 'schemathesis.cli'];
}
