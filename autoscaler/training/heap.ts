/** A small binary max-heap keyed by a number (ties: lower `tie` first). */
export class MaxHeap<T> {
  private items: Array<{ key: number; tie: number; value: T }> = [];

  get size(): number {
    return this.items.length;
  }

  push(value: T, key: number, tie = 0): void {
    const a = this.items;
    a.push({ key, tie, value });
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.above(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.above(a[l], a[m])) m = l;
        if (r < a.length && this.above(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top.value;
  }

  private above(x: { key: number; tie: number }, y: { key: number; tie: number }): boolean {
    return x.key > y.key || (x.key === y.key && x.tie < y.tie);
  }
}
