/**
 * writeTogether: the commands a worker issues in one turn of the event loop (a
 * row's count, then BullMQ's completion of its job a few promise hops later)
 * leave in one write, in order, and nothing waits past that turn.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { writeTogether } from '../../src/redis.js';

/**
 * A stand-in for Redis in its own process (so that it reads while this one is
 * busy, as Redis does): it answers +OK to every command and reports each read
 * it made as one JSON line.
 */
const SERVER = `
const net = require('node:net');
const server = net.createServer((socket) => socket.on('data', (chunk) => {
  const text = chunk.toString('latin1');
  process.stdout.write(JSON.stringify(text) + '\\n');
  socket.write('+OK\\r\\n'.repeat((text.match(/^\\*\\d+\\r\\n/gm) || []).length));
}));
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function recordingServer(): Promise<{ child: ChildProcess; port: number; reads: string[] }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const reads: string[] = [];
  let port = 0;
  let buffer = '';
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        if (port === 0) {
          port = Number(line);
          resolve();
        } else reads.push(JSON.parse(line) as string);
      }
    });
  });
  return { child, port, reads };
}

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

async function setup() {
  const { child, port, reads } = await recordingServer();
  const client = new Redis({ port, host: '127.0.0.1', enableReadyCheck: false, lazyConnect: true });
  client.on('error', () => undefined);
  await client.connect();
  cleanup.push(() => {
    client.disconnect();
    child.kill();
  });
  // settle the connection's own setup traffic
  await client.set('warm', '1');
  for (let i = 0; i < 100 && !reads.some((r) => r.includes('warm')); i++) await new Promise((r) => setTimeout(r, 10));
  reads.length = 0;
  return { client, reads };
}

/** A few awaits and 30 ms of work, all in the same turn of the event loop. */
const sameTurnWork = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  const until = Date.now() + 30;
  while (Date.now() < until) {
    // busy, as a worker is between a row's count and its job's completion
  }
};
/** Until the server has reported `n` reads (its reports come over a pipe). */
const reported = async (reads: string[], n: number) => {
  for (let i = 0; i < 100 && reads.length < n; i++) await new Promise((r) => setTimeout(r, 10));
};

describe('writeTogether', () => {
  it('sends the commands of one turn in one write, in order, including those issued after promise hops', async () => {
    const { client, reads } = await setup();
    writeTogether(client);
    const count = client.set('count', '1');
    await sameTurnWork(); // BullMQ's completion comes a few awaits later in the same turn
    const finish = client.set('finish', '2');
    await Promise.all([count, finish]);
    await reported(reads, 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(reads).toHaveLength(1);
    expect(reads[0]!.indexOf('count')).toBeGreaterThanOrEqual(0);
    expect(reads[0]!.indexOf('count')).toBeLessThan(reads[0]!.indexOf('finish'));
  });

  it('holds nothing past the turn: a command issued in a later turn still goes out, and so does the first one alone', async () => {
    const { client, reads } = await setup();
    writeTogether(client);
    const alone = client.set('alone', '1');
    await new Promise((r) => setTimeout(r, 5)); // a later turn
    await alone;
    const later = client.set('later', '2');
    await later;
    await reported(reads, 2);
    expect(reads.map((r) => (r.includes('alone') ? 'alone' : r.includes('later') ? 'later' : r))).toEqual(['alone', 'later']);
  });

  it('a second call in the same turn changes nothing (the socket is not corked twice)', async () => {
    const { client, reads } = await setup();
    writeTogether(client);
    const a = client.set('a', '1');
    writeTogether(client);
    const b = client.set('b', '2');
    await Promise.all([a, b]);
    const c = client.set('c', '3');
    await c; // would hang if the second call had left the socket corked
    await reported(reads, 2);
    expect(reads).toHaveLength(2);
  });
});
