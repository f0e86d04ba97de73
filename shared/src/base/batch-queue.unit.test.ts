import { eventually } from '../testing';
import { BatchQueue } from './batch-queue';

/** A write whose groups are recorded and finished by the test. */
function recordingWrite() {
  const groups: { items: string[]; finish(results?: PromiseSettledResult<string>[]): void; fail(err: Error): void }[] =
    [];
  const write = (items: string[]) =>
    new Promise<PromiseSettledResult<string>[]>((resolve, reject) => {
      groups.push({
        items,
        finish: (results) => resolve(results ?? items.map((item) => ({ status: 'fulfilled', value: `${item}!` }))),
        fail: reject,
      });
    });
  return { groups, write };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('BatchQueue: grouping pushes into writes', () => {
  it('writes a push at once while fewer than maxInFlight writes run, and the pushes made meanwhile as one group', async () => {
    const { groups, write } = recordingWrite();
    const queue = new BatchQueue(write, { maxGroup: 10, maxInFlight: 2 });
    const answers = ['a', 'b', 'c', 'd', 'e'].map((item) => queue.push(item));
    await flush();
    expect(groups.map((g) => g.items)).toEqual([['a'], ['b']]);
    groups[1]!.finish();
    await flush();
    expect(groups.map((g) => g.items)).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
    groups[0]!.finish();
    groups[2]!.finish();
    expect(await Promise.all(answers)).toEqual(['a!', 'b!', 'c!', 'd!', 'e!']);
  });

  it('with spareAfterMs, starts a second write only once the first has run that long', async () => {
    const { groups, write } = recordingWrite();
    // Long enough that the steps the test takes between two checks never reach it, even on a loaded machine.
    const queue = new BatchQueue(write, { maxGroup: 10, maxInFlight: 2, spareAfterMs: 500 });
    const started = performance.now();
    const answers = ['a', 'b', 'c'].map((item) => queue.push(item));
    await flush();
    expect(groups.map((g) => g.items)).toEqual([['a']]);
    queue.push('d').catch(() => undefined);
    // The first write is slow: the spare takes everything waiting, no sooner than 500 ms after it started.
    await eventually(() => groups.length === 2, { message: 'the spare write' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(499);
    expect(groups[1]!.items).toEqual(['b', 'c', 'd']);
    groups[0]!.finish();
    groups[1]!.finish();
    expect(await Promise.all(answers)).toEqual(['a!', 'b!', 'c!']);
    // A write that finishes in time hands the next group to the one slot: no spare.
    const more = ['e', 'f'].map((item) => queue.push(item));
    await flush();
    expect(groups.map((g) => g.items).slice(2)).toEqual([['e']]);
    groups[2]!.finish();
    await flush();
    expect(groups.map((g) => g.items).slice(2)).toEqual([['e'], ['f']]);
    groups[3]!.finish();
    expect(await Promise.all(more)).toEqual(['e!', 'f!']);
  });

  it('sends at most maxGroup items per write', async () => {
    const { groups, write } = recordingWrite();
    const queue = new BatchQueue(write, { maxGroup: 2, maxInFlight: 1 });
    const answers = ['a', 'b', 'c', 'd'].map((item) => queue.push(item));
    await flush();
    groups[0]!.finish();
    await flush();
    groups[1]!.finish();
    await flush();
    groups[2]!.finish();
    expect(await Promise.all(answers)).toHaveLength(4);
    expect(groups.map((g) => g.items)).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('keeps a group within maxWeight, and sends an item heavier than that alone', async () => {
    const { groups, write } = recordingWrite();
    const queue = new BatchQueue(write, {
      maxGroup: 10,
      maxInFlight: 1,
      weigh: (item: string) => item.length,
      maxWeight: 4,
    });
    const answers = ['a', 'bb', 'cc', 'd', 'eeeeee', 'f'].map((item) => queue.push(item));
    for (let i = 0; i < 5; i++) {
      await flush();
      groups[i]?.finish();
    }
    expect(await Promise.all(answers)).toHaveLength(6);
    expect(groups.map((g) => g.items)).toEqual([['a'], ['bb', 'cc'], ['d'], ['eeeeee'], ['f']]);
  });
});

describe('BatchQueue: results and failures', () => {
  it('settles each item by its own result, fails a whole group when its write fails, and goes on with the next group', async () => {
    const { groups, write } = recordingWrite();
    const queue = new BatchQueue(write, { maxGroup: 10, maxInFlight: 1 });
    const first = queue.push('a');
    const rest = ['b', 'c'].map((item) => queue.push(item));
    const last = ['d', 'e'].map((item) => queue.push(item));
    await flush();
    groups[0]!.fail(new Error('down'));
    await expect(first).rejects.toThrow('down');
    await flush();
    expect(groups[1]!.items).toEqual(['b', 'c', 'd', 'e']);
    groups[1]!.finish([
      { status: 'fulfilled', value: 'b!' },
      { status: 'rejected', reason: new Error('c refused') },
      { status: 'fulfilled', value: 'd!' },
    ]);
    await expect(rest[0]).resolves.toBe('b!');
    await expect(rest[1]).rejects.toThrow('c refused');
    await expect(last[0]).resolves.toBe('d!');
    // A write that forgets an item must not leave its post waiting forever.
    await expect(last[1]).rejects.toThrow('no result');
  });

  it('fails the group of a write that throws instead of returning a promise', async () => {
    const queue = new BatchQueue<string, string>(
      () => {
        throw new Error('synchronous');
      },
      { maxGroup: 10, maxInFlight: 1 },
    );
    await expect(queue.push('a')).rejects.toThrow('synchronous');
    await expect(queue.push('b')).rejects.toThrow('synchronous');
  });
});

describe('BatchQueue: gathering before a write', () => {
  it('with gatherMs, holds the first push that long for others, then writes them as one group', async () => {
    const { groups, write } = recordingWrite();
    const queue = new BatchQueue(write, { maxGroup: 10, maxInFlight: 1, gatherMs: 500 });
    const started = performance.now();
    const answers = [queue.push('a')];
    await flush();
    expect(groups).toEqual([]);
    answers.push(queue.push('b'), queue.push('c'));
    await eventually(() => groups.length === 1, { message: 'the gathered write' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(499);
    expect(groups[0]!.items).toEqual(['a', 'b', 'c']);
    groups[0]!.finish();
    expect(await Promise.all(answers)).toEqual(['a!', 'b!', 'c!']);
  });
});
