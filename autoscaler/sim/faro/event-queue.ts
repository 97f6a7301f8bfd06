/**
 * The simulator's event queue: a binary min-heap on (time, insertion order) over typed arrays, so
 * events at the same instant run in the order they were scheduled (SimPy's rule). Each event is one
 * int32 payload; the engine packs the event kind and an index into it.
 */
export class EventQueue {
  private t = new Float64Array(1024);
  private seq = new Float64Array(1024);
  private p = new Int32Array(1024);
  private n = 0;
  private counter = 0;

  get size(): number {
    return this.n;
  }

  /** Time of the earliest event; Infinity when empty. */
  peekTime(): number {
    return this.n > 0 ? this.t[0] : Infinity;
  }

  /**
   * Schedules `payload` at `time`. `order` overrides the insertion order among events at the same
   * instant (lower first; insertion numbers start at 0), for events that SimPy runs first there.
   */
  push(time: number, payload: number, order?: number): void {
    if (this.n === this.t.length) this.grow();
    const s = order ?? this.counter++;
    let i = this.n++;
    while (i > 0) {
      const par = (i - 1) >> 1;
      if (this.t[par] < time || (this.t[par] === time && this.seq[par] < s)) break;
      this.t[i] = this.t[par];
      this.seq[i] = this.seq[par];
      this.p[i] = this.p[par];
      i = par;
    }
    this.t[i] = time;
    this.seq[i] = s;
    this.p[i] = payload;
  }

  /** Removes the earliest event and returns its payload (the caller read its time by peekTime). */
  pop(): number {
    const top = this.p[0];
    const n = --this.n;
    if (n > 0) {
      const lt = this.t[n];
      const ls = this.seq[n];
      const lp = this.p[n];
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        let c = l;
        if (r < n && (this.t[r] < this.t[l] || (this.t[r] === this.t[l] && this.seq[r] < this.seq[l]))) c = r;
        if (lt < this.t[c] || (lt === this.t[c] && ls < this.seq[c])) break;
        this.t[i] = this.t[c];
        this.seq[i] = this.seq[c];
        this.p[i] = this.p[c];
        i = c;
      }
      this.t[i] = lt;
      this.seq[i] = ls;
      this.p[i] = lp;
    }
    return top;
  }

  private grow(): void {
    const m = this.t.length * 2;
    const t = new Float64Array(m);
    t.set(this.t);
    const s = new Float64Array(m);
    s.set(this.seq);
    const p = new Int32Array(m);
    p.set(this.p);
    this.t = t;
    this.seq = s;
    this.p = p;
  }
}
