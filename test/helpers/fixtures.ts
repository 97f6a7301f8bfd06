import { FunctionDeployment } from '../../gateway/registry/function-spec';

/** Builder for deployment bodies: `aFunction('f').image('x').minScale(1).slo(200).build()`. */
export class FunctionBuilder {
  private d: FunctionDeployment;
  constructor(name: string) {
    this.d = { service: name, image: 'test/echo-http:1', labels: {}, annotations: {} };
  }
  image(i: string) {
    this.d.image = i;
    return this;
  }
  namespace(ns: string) {
    this.d.namespace = ns;
    return this;
  }
  fprocess(p: string) {
    this.d.envProcess = p;
    return this;
  }
  env(k: string, v: string) {
    this.d.envVars = { ...(this.d.envVars ?? {}), [k]: v };
    return this;
  }
  label(k: string, v: string) {
    this.d.labels = { ...this.d.labels, [k]: v };
    return this;
  }
  annotation(k: string, v: string) {
    this.d.annotations = { ...this.d.annotations, [k]: v };
    return this;
  }
  minScale(n: number) {
    return this.label('com.openfaas.scale.min', String(n));
  }
  maxScale(n: number) {
    return this.label('com.openfaas.scale.max', String(n));
  }
  slo(ms: number) {
    return this.annotation('mlfaas.slo.latency_ms', String(ms));
  }
  maxInflight(n: number) {
    return this.annotation('mlfaas.max_inflight', String(n));
  }
  secrets(...s: string[]) {
    this.d.secrets = s;
    return this;
  }
  build(): FunctionDeployment {
    return JSON.parse(JSON.stringify(this.d)) as FunctionDeployment;
  }
}

export const aFunction = (name: string) => new FunctionBuilder(name);
