/**
 * Leaves a hung Sentinel master once the Sentinels promote another.
 *
 * ioredis follows a failover when its connection to the old master closes. A
 * master that hangs (stopped, or stalled on a slow disk) keeps its TCP
 * connections open, so a long-lived connection waited on it for as long as it
 * hung, a new master in place: a 20 s freeze stopped every registration for
 * 20.1 s (test/ha/sentinel-freeze.ha.test.ts). Here each process listens to
 * every Sentinel's `+switch-master` for its master, once, and reconnects its
 * connections (a command-line run's too), which then ask the Sentinels for the
 * master again. Each is dropped at once, as a network failure would drop it:
 * ending it gracefully (ioredis's disconnect) waited 2 s more for the hung
 * master to close its side.
 *
 * ioredis's own `failoverDetector` does this per connection, but in 6.0.0 a
 * switch that arrives while a connection is already reconnecting (the master
 * killed, not hung) ends that connection for good: the pool stopped after a
 * plain failover. Here a connection is reconnected only while it is connected
 * to another address than the new master's. (Sentinels that announce hostnames
 * name the new master by one, which is not the address a connection reports: a
 * connection already on the new master is then reconnected once more.)
 *
 * Commands out on a connection reconnected here are sent again on the new one,
 * as on any reconnect (ioredis's autoResendUnfulfilledCommands). Their first
 * copies, if the old master runs them when it wakes, are lost with its data;
 * the pool's lost-write check covers what that costs (docs/how-it-works.md).
 */
import { Redis } from 'ioredis';

export interface SentinelSwitchOptions {
  sentinels: ReadonlyArray<{ host: string; port: number }>;
  name: string;
  /** the Sentinels' password: as ioredis's own Sentinel connections are given it (redis.ts), without a username */
  password?: string;
  tls?: object;
}

/** The process's one listener per master name (processes each hold a few connections). */
const switches = new Map<string, SentinelSwitch>();

/** Connections let go of on a switch: they reconnect by themselves, to the new master. */
const letGo = new WeakSet<Redis>();

/**
 * Whether a switch let `client` go: a connection closed so before it was ready
 * reconnects to the new master by itself, and a command queued meanwhile is answered
 * there. ioredis's connect() rejects on that close all the same.
 */
export function letGoOnSwitch(client: Redis): boolean {
  return letGo.has(client);
}

/** `client` (and the connections BullMQ duplicates from it) follows a switch of its master. */
export function followSwitches<T extends Redis>(client: T, opts: SentinelSwitchOptions): T {
  let sw = switches.get(opts.name);
  if (!sw) {
    sw = new SentinelSwitch(opts);
    switches.set(opts.name, sw);
  }
  sw.track(client);
  return client;
}

export class SentinelSwitch {
  private readonly clients = new Set<Redis>();
  private subscribers: Redis[] = [];

  constructor(private readonly opts: SentinelSwitchOptions) {}

  track(client: Redis): void {
    this.clients.add(client);
    client.once('end', () => this.untrack(client));
    // BullMQ makes its blocking connections with duplicate(): those follow too
    const duplicate = client.duplicate.bind(client);
    client.duplicate = (override) => {
      const copy = duplicate(override);
      this.track(copy);
      return copy;
    };
    if (this.subscribers.length === 0) this.listen();
  }

  private untrack(client: Redis): void {
    this.clients.delete(client);
    // nothing left to follow (a process or a test that closed its connections): stop listening
    if (this.clients.size === 0) this.stop();
  }

  private listen(): void {
    const { password, tls } = this.opts;
    this.subscribers = this.opts.sentinels.map(({ host, port }) => {
      const sub = new Redis({
        host, port, ...(password ? { password } : {}), ...(tls ? { tls } : {}),
        connectionName: 'bulk-register:sentinel-switch',
        maxRetriesPerRequest: null, enableOfflineQueue: true,
        retryStrategy: (times) => Math.min(200 * times, 2000),
      });
      // a Sentinel away is one of several: its errors are not the pool's
      sub.on('error', () => undefined);
      sub.on('message', (channel: string, message: string) => {
        if (channel === '+switch-master') this.onSwitch(message);
      });
      // queued until the Sentinel answers (it may be down now), and made again on every reconnect
      sub.subscribe('+switch-master').catch(() => undefined);
      return sub;
    });
  }

  /** `<name> <old-ip> <old-port> <new-ip> <new-port>`, from each Sentinel that saw it. */
  onSwitch(message: string): void {
    const [name, , , host, port] = message.split(' ');
    if (name !== this.opts.name || !host || !port) return;
    for (const client of this.clients) {
      // a connection reconnecting asks the Sentinels anyway; one on the new master stays
      if (client.status !== 'ready' && client.status !== 'connect') continue;
      const stream = client.stream;
      if (stream && stream.remoteAddress === host && String(stream.remotePort) === port) continue;
      letGo.add(client);
      // destroyed, not ended: ioredis waits `disconnectTimeout` (2 s) for the peer to close an
      // ended socket, and a hung master never does; ioredis then reconnects as after any drop
      if (stream) stream.destroy();
      else client.disconnect(true);
    }
  }

  stop(): void {
    for (const sub of this.subscribers) sub.disconnect();
    this.subscribers = [];
    if (switches.get(this.opts.name) === this) switches.delete(this.opts.name);
  }
}
