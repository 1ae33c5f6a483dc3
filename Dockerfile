# One image for the API, the workers and the one-shot migration; compose overrides the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

# fonts-noto-cjk: the figures' fallback font for Chinese, Japanese and Korean names
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc g++ fonts-noto-cjk \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /srv/absrank
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY workers ./workers
COPY migrations ./migrations
RUN pip install '.[cec]' && useradd --create-home --uid 10001 absrank \
    && mkdir -p /srv/absrank/var && chown absrank /srv/absrank/var

USER absrank
EXPOSE 8000
ENV ABSRANK_HOST=0.0.0.0
CMD ["absrank", "serve", "--no-embedded-worker", "--no-default-tables"]
