import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { describeDims, parseEnforcedDims, restrictToEnforced } from '../../autoscaler/inference/enforcement';

const points = [0.25, 0.5, 1].flatMap((smShare) => [0.5, 1].map((quota) => ({ batch: 1, smShare, quota, latencyMs: 10 / (smShare * quota) })));

describe('enforced dimensions', () => {
  test('parse and describe', () => {
    expect(parseEnforcedDims('spatial,temporal')).toEqual({ spatial: true, temporal: true });
    expect(parseEnforcedDims('temporal')).toEqual({ spatial: false, temporal: true });
    expect(parseEnforcedDims('none')).toEqual({ spatial: false, temporal: false });
    expect(() => parseEnforcedDims('sm')).toThrow(/"sm" is not an enforced dimension/);
    expect(describeDims({ spatial: false, temporal: true })).toBe('temporal');
    expect(describeDims({ spatial: false, temporal: false })).toBe('none');
  });

  test('an unenforced dimension is pinned at its full value, so a policy cannot plan with it', () => {
    const t = restrictToEnforced(points, { spatial: false, temporal: true });
    expect(new Set(t.map((p) => p.smShare))).toEqual(new Set([1]));
    expect(new Set(t.map((p) => p.quota))).toEqual(new Set([0.5, 1]));
    const cap = new ProfileCapability({ f: t });
    expect(cap.grid('f').smShares).toEqual([1]);
    expect(restrictToEnforced(points, { spatial: false, temporal: false })).toEqual([{ batch: 1, smShare: 1, quota: 1, latencyMs: 10 }]);
    expect(restrictToEnforced(points, { spatial: true, temporal: true })).toHaveLength(points.length);
  });

  test('a profile without a full-value point cannot be restricted', () => {
    expect(() => restrictToEnforced(points.filter((p) => p.quota < 1), { spatial: true, temporal: false })).toThrow(/no profile point/);
  });
});
