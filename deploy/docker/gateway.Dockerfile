# The gateway: `docker build -f deploy/docker/gateway.Dockerfile -t mlfaas/gateway:0.1.0 .`
# from the repository root (README, "Kubernetes").
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
EXPOSE 8080
ENTRYPOINT ["node", "bin/mlfaas"]
CMD ["gateway"]
