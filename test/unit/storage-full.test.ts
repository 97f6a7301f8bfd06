import { isStorageFull } from '../../gateway/lib/redis-health';

describe('isStorageFull', () => {
  test.each([
    ['MISCONF Errors writing to the AOF file: No space left on device', true],
    ['OOM command not allowed when used memory > maxmemory', true],
    ['NOREPLICAS Not enough good replicas to write.', true],
    ['Connection is closed.', false],
    ['ERR wrong number of arguments', false],
  ])('%s → %s', (message, want) => {
    expect(isStorageFull(new Error(message))).toBe(want);
  });

  test("a transaction refused at EXEC is judged by its commands' errors", () => {
    const abort = Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [new Error('NOREPLICAS Not enough good replicas to write.')],
    });
    expect(isStorageFull(abort)).toBe(true);
    expect(isStorageFull(Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'),
      { previousErrors: [new Error('ERR syntax')] }))).toBe(false);
  });
});
