/**
 * A start-up failure the operator can fix (a port taken, a data dir in use): the process prints
 * its message alone, which names the variable or file to change, and no stack trace.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
