import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureKafkaJars, freePort, java } from './kafka-broker';

export interface KafkaClusterNode {
  /** Kafka's node.id (1..n): the same number names the broker and its controller. */
  id: number;
  port: number;
  controllerPort: number;
  dataDir: string;
  /** True while the JVM runs. */
  running: boolean;
}

export interface KafkaCluster {
  /** `host:port,host:port,...` for KAFKA_BROKERS. */
  brokers: string;
  nodes: KafkaClusterNode[];
  /** SIGKILLs node `id` (no clean shutdown: what a crash or an OOM kill does). Resolves once it exited. */
  kill(id: number): Promise<void>;
  /** Starts node `id` again on the same ports and data; resolves once it says it started. */
  restart(id: number): Promise<void>;
  /** Stops every node still running (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
  /**
   * The node that is the active KRaft controller, from the nodes' logs (the latest controller
   * epoch any node took over); null while none is (an election pending, or its node is down).
   */
  activeController(): number | null;
}

export interface KafkaClusterOptions {
  /** Topic defaults the cluster enforces (the production settings we promise durability for). */
  replicationFactor?: number;
  minInsyncReplicas?: number;
  /**
   * How soon the controller fences a node that stopped heartbeating. Kafka's default is 9 s;
   * tests use less so a killed leader's partitions move sooner, but not so little that a
   * loaded 2-core machine fences live nodes.
   */
  brokerSessionTimeoutMs?: number;
  heapMb?: number;
}

/**
 * An n-node Apache Kafka cluster in KRaft mode, every node both broker and controller (the
 * controller quorum is all n nodes), on free loopback ports, from the same Maven jars as the
 * single broker. Topics default to replication `min(3, n)` and min ISR `min(2, n)`, the
 * internal offsets and transaction topics likewise, unclean leader election off: the settings
 * under which "acknowledged by all in-sync replicas" survives the loss of one node.
 */
export async function startKafkaCluster(n: number, baseDir: string, opts: KafkaClusterOptions = {}): Promise<KafkaCluster> {
  if (n < 1) throw new Error('a cluster needs at least one node');
  const classpath = ensureKafkaJars();
  const rf = opts.replicationFactor ?? Math.min(3, n);
  const minIsr = opts.minInsyncReplicas ?? Math.min(2, n);
  const sessionMs = opts.brokerSessionTimeoutMs ?? 6_000;
  const nodes: KafkaClusterNode[] = [];
  for (let id = 1; id <= n; id++) {
    nodes.push({ id, port: await freePort(), controllerPort: await freePort(), dataDir: join(baseDir, `node-${id}`), running: false });
  }
  const voters = nodes.map((nd) => `${nd.id}@127.0.0.1:${nd.controllerPort}`).join(',');
  let clusterId = randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-')) clusterId = randomBytes(16).toString('base64url');

  const propsOf = (nd: KafkaClusterNode) => join(nd.dataDir, 'server.properties');
  await Promise.all(
    nodes.map(async (nd) => {
      const logDir = join(nd.dataDir, 'kafka-logs');
      mkdirSync(logDir, { recursive: true });
      writeFileSync(
        propsOf(nd),
        [
          'process.roles=broker,controller',
          `node.id=${nd.id}`,
          `controller.quorum.voters=${voters}`,
          `listeners=PLAINTEXT://127.0.0.1:${nd.port},CONTROLLER://127.0.0.1:${nd.controllerPort}`,
          `advertised.listeners=PLAINTEXT://127.0.0.1:${nd.port}`,
          'controller.listener.names=CONTROLLER',
          'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
          'inter.broker.listener.name=PLAINTEXT',
          `log.dirs=${logDir}`,
          'num.partitions=1',
          'auto.create.topics.enable=false',
          `default.replication.factor=${rf}`,
          `min.insync.replicas=${minIsr}`,
          'unclean.leader.election.enable=false',
          `offsets.topic.replication.factor=${rf}`,
          'offsets.topic.num.partitions=4',
          `transaction.state.log.replication.factor=${rf}`,
          `transaction.state.log.min.isr=${minIsr}`,
          'group.initial.rebalance.delay.ms=0',
          `broker.session.timeout.ms=${sessionMs}`,
          `broker.heartbeat.interval.ms=${Math.max(500, Math.floor(sessionMs / 4))}`,
          // A follower that stops fetching leaves the ISR after this long (Kafka's default is 30 s).
          `replica.lag.time.max.ms=${Math.max(10_000, sessionMs * 2)}`,
          '',
        ].join('\n'),
      );
      await new Promise<void>((resolve, reject) => {
        const p = spawn('java', java(classpath, 'kafka.tools.StorageTool', ['format', '-t', clusterId, '-c', propsOf(nd)]), {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (out += d));
        p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kafka storage format of node ${nd.id} failed:\n${out}`))));
      });
    }),
  );

  const procs = new Map<number, ChildProcess>();
  const nodeOf = (id: number) => {
    const nd = nodes.find((x) => x.id === id);
    if (!nd) throw new Error(`no kafka node ${id} (nodes are 1..${n})`);
    return nd;
  };

  const launch = async (nd: KafkaClusterNode) => {
    if (procs.has(nd.id)) throw new Error(`kafka node ${nd.id} is already running`);
    const started = Date.now();
    const log = createWriteStream(join(nd.dataDir, 'broker.log'), { flags: 'a' });
    const heap = opts.heapMb ?? 512;
    const args = java(classpath, 'kafka.Kafka', [propsOf(nd)], ['-XX:TieredStopAtLevel=1']).map((a) =>
      a === '-Xmx768m' ? `-Xmx${heap}m` : a,
    );
    const p = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    procs.set(nd.id, p);
    nd.running = true;
    p.once('exit', () => {
      if (procs.get(nd.id) === p) procs.delete(nd.id);
      nd.running = false;
      log.end();
    });
    await new Promise<void>((resolve, reject) => {
      let tail = '';
      let done = false;
      // A node that restarts while the others are loaded can take a while; this is a bound, not a pace.
      const timer = setTimeout(() => finish(new Error(`kafka node ${nd.id} did not start within 180 s:\n${tail}`)), 180_000);
      const finish = (e?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (e) reject(e);
        else resolve();
      };
      const onData = (d: Buffer) => {
        log.write(d);
        if (done) return;
        tail = (tail + d.toString()).slice(-4000);
        if (/Kafka Server started/.test(tail)) finish();
      };
      p.stdout!.on('data', onData);
      p.stderr!.on('data', onData);
      p.once('exit', (code, signal) => finish(new Error(`kafka node ${nd.id} exited with ${code ?? signal}:\n${tail}`)));
    });
    process.stderr.write(`[kafka] node ${nd.id} on 127.0.0.1:${nd.port} started in ${Date.now() - started} ms\n`);
  };

  const terminate = async (id: number, signal: NodeJS.Signals) => {
    const p = procs.get(id);
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    p.kill(signal);
    const force = signal === 'SIGKILL' ? null : setTimeout(() => p.kill('SIGKILL'), 10_000);
    await exited;
    if (force) clearTimeout(force);
  };

  const cluster: KafkaCluster = {
    brokers: nodes.map((nd) => `127.0.0.1:${nd.port}`).join(','),
    nodes,
    kill: (id) => terminate(nodeOf(id).id, 'SIGKILL'),
    restart: (id) => launch(nodeOf(id)),
    stop: async () => {
      await Promise.all([...procs.keys()].map((id) => terminate(id, 'SIGTERM')));
    },
    activeController: () => {
      let best: { id: number; epoch: number } | null = null;
      for (const nd of nodes) {
        const file = join(nd.dataDir, 'broker.log');
        if (!existsSync(file)) continue;
        for (const m of readFileSync(file, 'utf8').matchAll(
          /\[QuorumController id=(\d+)\] Becoming the active controller at epoch (\d+)/g,
        )) {
          const epoch = Number(m[2]);
          if (!best || epoch > best.epoch) best = { id: Number(m[1]), epoch };
        }
      }
      return best && nodeOf(best.id).running ? best.id : null;
    },
  };
  try {
    // A KRaft node only reports "started" once a quorum of controllers elected a leader: start them together.
    await Promise.all(nodes.map((nd) => launch(nd)));
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}
