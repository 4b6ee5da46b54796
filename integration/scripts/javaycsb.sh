#!/usr/bin/env bash
# Fetches Java YCSB's core (site.ycsb:core:0.17.0, the last release on
# Maven Central; the bindings are not published there) with its runtime
# dependencies into $YCSBCTL_SERVERS_DIR/javaycsb/lib and prints the
# classpath. The interoperability test runs its BasicDB beside ycsbctl's.
set -euo pipefail
dir="${YCSBCTL_SERVERS_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/.servers}/javaycsb"
mkdir -p "$dir"
if [ ! -f "$dir/lib/core-0.17.0.jar" ]; then
  cat > "$dir/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>ycsbctl.test</groupId>
  <artifactId>javaycsb</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>site.ycsb</groupId><artifactId>core</artifactId><version>0.17.0</version></dependency>
  </dependencies>
</project>
POM
  (cd "$dir" && mvn -B -q dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=lib >&2)
fi
ls "$dir"/lib/*.jar | tr '\n' ':' | sed 's/:$//'
echo
