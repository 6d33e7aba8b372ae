import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system, µs) of a process, every thread, or of one of its threads (`task`). */
export function processCpuMicros(pid: number, task?: number): number {
  const stat = readFileSync(task === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${task}/stat`, 'utf8');
  // Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

/**
 * CPU time (µs) of a process's threads by name, its main thread as `main`: Node names its V8
 * and libuv helpers `node` alike, the CPU profiler's thread `v8:ProfEvntProc` (what profiling
 * costs); the embedded engine's insert thread reads `Unknown`, its merges `MergeMutate`.
 */
export function threadCpuByName(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = Number(task) === pid ? 'main' : readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
      out.set(name, (out.get(name) ?? 0) + processCpuMicros(pid, Number(task)));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/**
 * A process's CPU time by thread name since `atStart` (an earlier threadCpuByName of it), µs.
 * Given the process's own CPU over the same window (processCpuMicros, which holds the threads
 * that ended too: the engine's pools let idle threads go), what the live threads do not account
 * for is reported as `ended`.
 */
export function threadCpuSince(pid: number, atStart: Map<string, number>, processMicrosSince?: number): Record<string, number> {
  const since: Record<string, number> = {};
  let live = 0;
  for (const [name, micros] of threadCpuByName(pid)) live += since[name] = micros - (atStart.get(name) ?? 0);
  if (processMicrosSince !== undefined) since.ended = Math.max(0, processMicrosSince - live);
  return since;
}
