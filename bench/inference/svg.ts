/** A small line chart as SVG: one panel per series group, shared x axis (seconds). */
export function lineChart(title: string, panels: Array<{ ylabel: string; lines: Array<{ name: string; color: string; ys: number[] }> }>): string {
  const W = 900;
  const PH = 200;
  const L = 60;
  const R = 150;
  const H = panels.length * (PH + 40) + 40;
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${title}</text>`];
  panels.forEach((p, k) => {
    const top = 40 + k * (PH + 40);
    const n = Math.max(...p.lines.map((l) => l.ys.length));
    const ymax = Math.max(1e-9, ...p.lines.flatMap((l) => l.ys)) * 1.05;
    const x = (i: number) => L + ((W - L - R) * i) / Math.max(1, n - 1);
    const y = (v: number) => top + PH - (PH * v) / ymax;
    out.push(`<rect x="${L}" y="${top}" width="${W - L - R}" height="${PH}" fill="none" stroke="#999"/>`);
    out.push(`<text x="15" y="${top + PH / 2}" transform="rotate(-90 15 ${top + PH / 2})" text-anchor="middle">${p.ylabel}</text>`);
    out.push(`<text x="${L - 5}" y="${top + 10}" text-anchor="end">${ymax.toFixed(1)}</text><text x="${L - 5}" y="${top + PH}" text-anchor="end">0</text>`);
    out.push(`<text x="${W - R}" y="${top + PH + 15}" text-anchor="end">${n} s</text>`);
    p.lines.forEach((l, j) => {
      const pts = l.ys.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      out.push(`<polyline fill="none" stroke="${l.color}" stroke-width="1.2" points="${pts}"/>`);
      out.push(`<text x="${W - R + 10}" y="${top + 15 + 16 * j}" fill="${l.color}">${l.name}</text>`);
    });
  });
  out.push('</svg>');
  return out.join('\n');
}
