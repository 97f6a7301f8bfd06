/**
 * A binary heap ordered by `before(a, b)` (a comes out first), a strict weak order. Used by the
 * inference simulator's event queue (earliest time first) and by the training allocation's
 * marginal-return fill (largest gain first, ties by submission).
 */
export class Heap<T> {
  private readonly a: T[] = [];

  constructor(private readonly before: (x: T, y: T) => boolean) {}

  get size(): number {
    return this.a.length;
  }

  peek(): T | undefined {
    return this.a[0];
  }

  push(x: T): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(x, a[p])) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = x;
  }

  pop(): T | undefined {
    const a = this.a;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      const n = a.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && this.before(a[r], a[l]) ? r : l;
        if (!this.before(a[c], last)) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
