# The node agent: `docker build -f deploy/docker/node-agent.Dockerfile -t mlfaas/node-agent:0.1.0 .`
# It builds the native parts (tokend, and the CUDA limiter where CUDA headers exist) and installs
# the limiter on the node for fractional-GPU pods.
FROM node:20-bookworm AS native
WORKDIR /src
COPY native native
RUN make -C native

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
COPY tsconfig.json ./
COPY --from=native /src/native/build native/build
EXPOSE 9100
ENTRYPOINT ["node", "bin/mlfaas"]
CMD ["node-agent"]
