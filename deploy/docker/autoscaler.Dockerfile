# The autoscaler: `docker build -f deploy/docker/autoscaler.Dockerfile -t mlfaas/autoscaler:0.1.0 .`
# (the same sources as the gateway; onnxruntime-node runs the shipped latency predictor on CPU).
FROM node:20-bookworm-slim
ENV ONNXRUNTIME_NODE_INSTALL=skip NODE_ENV=production
WORKDIR /opt/mlfaas
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY bin bin
COPY cli cli
COPY gateway gateway
COPY node-runtime node-runtime
COPY autoscaler autoscaler
COPY templates templates
COPY tsconfig.json ./
RUN useradd --uid 10001 --no-create-home mlfaas
USER 10001
ENTRYPOINT ["node", "bin/mlfaas"]
CMD ["autoscaler"]
