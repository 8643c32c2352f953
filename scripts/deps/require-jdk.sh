# Sourced by the Maven-based installers: fails through their `die` unless
# mvn and a JDK >= 17 are on PATH.
command -v mvn >/dev/null 2>&1 || die "mvn not found (Debian package 'maven')"
command -v java >/dev/null 2>&1 || die "java not found (need a JDK >= 17)"
jv="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
[[ "${jv%%.*}" =~ ^[0-9]+$ && "${jv%%.*}" -ge 17 ]] || die "need Java >= 17, found '${jv:-unknown}'"
