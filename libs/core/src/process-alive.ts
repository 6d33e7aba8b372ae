/** Whether a process with this id runs (files named by their writer's pid are left alone while it does). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, it is someone else's.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
