"""The meter's learnt launch costs against CUPTI's kernel times (native/test/gpu-check.sh diagnostics).

  costs.py COSTS_FILE KERNELS_FILE

COSTS_FILE: the limiter's table at exit (TL_COSTS_FILE: cost ns, blocks, samples, mangled name per
line); KERNELS_FILE: torchbench.py --kernels (per kernel name: launches and CUPTI microseconds over
20 requests). Names are matched after c++filt, ignoring spaces. Prints one JSON line: per request,
CUPTI's kernel time and what the meter would charge for the same launches, overall and by CUPTI's
mean kernel time (under 5 us, 5-20, 20-100, over 100), and the kernels that differ most.
"""
import json
import subprocess
import sys


def norm(s):
    return ''.join(s.split())


def main(costs_path, kernels_path):
    rows = [ln.rstrip('\n').split('\t', 3) for ln in open(costs_path) if ln.strip()]
    names = [r[3] for r in rows]
    try:
        dem = subprocess.run(['c++filt'], input='\n'.join(names), capture_output=True, text=True, timeout=30).stdout.split('\n')
    except Exception:
        dem = names
    ours = {}
    for r, d in zip(rows, dem):
        ours.setdefault(norm(d or r[3]), []).append(int(r[0]))
    buckets = {'<5us': [0.0, 0.0], '5-20us': [0.0, 0.0], '20-100us': [0.0, 0.0], '>100us': [0.0, 0.0]}
    total = [0.0, 0.0]
    unmatched = [0, 0.0]
    worst = []
    for ln in open(kernels_path):
        k = json.loads(ln)
        n, us = k['n'], k['us']
        if not n:
            continue
        mean = us / n
        mine = ours.get(norm(k['name']))
        if not mine:
            unmatched[0] += 1
            unmatched[1] += us
            continue
        charge_us = sum(mine) / len(mine) / 1e3 * n
        b = '<5us' if mean < 5 else '5-20us' if mean < 20 else '20-100us' if mean < 100 else '>100us'
        buckets[b][0] += us
        buckets[b][1] += charge_us
        total[0] += us
        total[1] += charge_us
        worst.append((charge_us - us, k['name'][:80], round(mean, 2), round(sum(mine) / len(mine) / 1e3, 2), n))
    worst.sort(reverse=True)
    per = 20.0
    print(json.dumps({
        'cupti_us_per_request': round(total[0] / per, 1), 'charge_us_per_request': round(total[1] / per, 1),
        'ratio': round(total[1] / total[0], 3) if total[0] else None,
        'by_kernel_time': {b: {'cupti_us': round(v[0] / per, 1), 'charge_us': round(v[1] / per, 1),
                               'ratio': round(v[1] / v[0], 3) if v[0] else None} for b, v in buckets.items()},
        'unmatched_kernels': unmatched[0], 'unmatched_cupti_us_per_request': round(unmatched[1] / per, 1),
        'most_overcharged': [{'name': w[1], 'cupti_mean_us': w[2], 'cost_us': w[3], 'launches': w[4]} for w in worst[:6]],
    }))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
