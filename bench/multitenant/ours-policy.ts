/**
 * Our fixed-cluster controller (autoscaler/multitenant/mlfaas, defaults as tuned on days 1–10) as an
 * extra policy of the Faro comparison (bench/multitenant/faro.ts `extra`): one replica per job at
 * t = 0 as Faro's runs, accept rates applied at once, the view's arrival rate counted from the
 * arrivals already past (see ours-lib.ts).
 */
import { mlfaasExtraPolicy } from './ours-lib';

export const OURS_POLICY = mlfaasExtraPolicy();
