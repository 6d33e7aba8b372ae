import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from './paths';

/** Where `mvn dependency:copy-dependencies` puts the broker's jars (test/kafka/pom.xml). */
const KAFKA_DIR = join(REPO_ROOT, 'test', 'kafka');
const LIBS_DIR = join(KAFKA_DIR, 'target', 'kafka-libs');

export interface KafkaBroker {
  /** `host:port` for KAFKA_BROKERS. */
  brokers: string;
  port: number;
  dataDir: string;
  /** The broker JVM's process id while it runs (for CPU accounting in benchmarks). */
  pid(): number | undefined;
  /** Stops the broker (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
  /** Kills it (SIGKILL: no clean shutdown) and waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and data (after stop). */
  restart(): Promise<void>;
}

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Resolves Apache Kafka's jars from Maven Central once (cached in ~/.m2 and test/kafka/target),
 * so a fresh machine with Java and Maven needs nothing else.
 */
export function ensureKafkaJars(): string {
  const ready = existsSync(LIBS_DIR) && readdirSync(LIBS_DIR).some((f) => /^kafka_2\.13-.*\.jar$/.test(f));
  if (!ready) {
    const started = Date.now();
    const r = spawnSync('mvn', ['-q', '-B', '-f', join(KAFKA_DIR, 'pom.xml'), 'dependency:copy-dependencies'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`mvn could not resolve the Kafka jars (${r.status}):\n${r.stdout}\n${r.stderr}`);
    process.stderr.write(`[kafka] jars resolved from Maven in ${Math.round((Date.now() - started) / 1000)} s\n`);
  }
  return join(LIBS_DIR, '*');
}

export function java(classpath: string, main: string, args: string[], extraOpts: string[] = []): string[] {
  return ['-Xms128m', '-Xmx768m', '-XX:+UseSerialGC', '-Djava.awt.headless=true', ...extraOpts, '-cp', classpath, main, ...args];
}

/**
 * Starts a single-node Apache Kafka in KRaft mode (broker + controller in one JVM) on free
 * ports, with its storage formatted under `dataDir`. Resolves once the broker says it started.
 */
export async function startKafkaBroker(dataDir: string): Promise<KafkaBroker> {
  const classpath = ensureKafkaJars();
  const [port, controllerPort] = [await freePort(), await freePort()];
  const logDir = join(dataDir, 'kafka-logs');
  mkdirSync(logDir, { recursive: true });
  const props = join(dataDir, 'server.properties');
  writeFileSync(
    props,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${logDir}`,
      'num.partitions=1',
      'auto.create.topics.enable=false',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=4',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      // Tests start and stop consumers often: no 3 s wait before the first rebalance.
      'group.initial.rebalance.delay.ms=0',
      'log.flush.interval.messages=9223372036854775807',
      '',
    ].join('\n'),
  );
  // A base64 UUID; like Kafka's own Uuid.randomUuid, never one starting with '-' (it would parse as an option).
  let clusterId = randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-')) clusterId = randomBytes(16).toString('base64url');
  const format = spawnSync('java', java(classpath, 'kafka.tools.StorageTool', ['format', '-t', clusterId, '-c', props]), {
    encoding: 'utf8',
  });
  if (format.status !== 0) throw new Error(`kafka storage format failed:\n${format.stdout}\n${format.stderr}`);

  let proc: ChildProcess | null = null;
  const launch = async () => {
    const started = Date.now();
    const log = createWriteStream(join(dataDir, 'broker.log'), { flags: 'a' });
    const p = spawn('java', java(classpath, 'kafka.Kafka', [props], ['-XX:TieredStopAtLevel=1']), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc = p;
    await new Promise<void>((resolve, reject) => {
      let tail = '';
      const timer = setTimeout(() => reject(new Error(`kafka did not start within 90 s:\n${tail}`)), 90_000);
      const onData = (d: Buffer) => {
        log.write(d);
        tail = (tail + d.toString()).slice(-4000);
        if (/Kafka Server started|\[KafkaRaftServer nodeId=1\] Kafka Server started/.test(tail)) {
          clearTimeout(timer);
          resolve();
        }
      };
      p.stdout!.on('data', onData);
      p.stderr!.on('data', onData);
      p.once('exit', (code) => {
        clearTimeout(timer);
        log.end();
        reject(new Error(`kafka exited with ${code}:\n${tail}`));
      });
    });
    process.stderr.write(`[kafka] broker on 127.0.0.1:${port} started in ${Date.now() - started} ms\n`);
  };
  const stop = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    p.kill('SIGTERM');
    const force = setTimeout(() => p.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(force);
    proc = null;
  };
  const kill = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    p.kill('SIGKILL');
    await exited;
    proc = null;
  };
  await launch();
  return { brokers: `127.0.0.1:${port}`, port, dataDir, pid: () => proc?.pid, stop, kill, restart: launch };
}
