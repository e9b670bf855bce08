# The App's image (veribot serve, or `docker run IMAGE worker`), with exact pins; the Action runs on the runner (action.yml).
# bubblewrap isolates the code under review (veribot/checks/sandbox); it needs user
# namespaces or root with CAP_SYS_ADMIN (e.g. `docker run --security-opt seccomp=unconfined
# --security-opt apparmor=unconfined` or `--cap-add SYS_ADMIN`). Where it cannot work,
# `veribot sandbox-check` says why and the worker reviews proof-only.
FROM python:3.11-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

# Exact pins for the image; pyproject.toml keeps the ranges for library use.
RUN pip install --no-cache-dir \
    z3-solver==5.4.0.0 \
    GitPython==3.2.1 \
    unidiff==1.0.1 \
    hypothesis==6.170.15 \
    crosshair-tool==0.0.112 \
    rich==15.0.0 \
    anthropic==0.125.0 \
    Flask==3.1.3 \
    PyGithub==2.10.0 \
    huey==2.6.0 \
    waitress==3.0.2 \
    pytest==9.2.0 \
    mypy==2.4.1

COPY pyproject.toml README.md /opt/veribot/
COPY veribot /opt/veribot/veribot
RUN pip install --no-cache-dir --no-deps /opt/veribot

# The runner mounts the checkout at /github/workspace, owned by another user.
RUN git config --system --add safe.directory '*'

# The GitHub App: `veribot serve` (the webhook) by default, `docker run IMAGE worker` for
# the workers. The Action does not use this image: it is a composite action (action.yml).
ENTRYPOINT ["veribot"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
