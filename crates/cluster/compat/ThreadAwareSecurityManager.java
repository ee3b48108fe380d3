/*
 * Licensed to the Apache Software Foundation (ASF) under one
 * or more contributor license agreements.  See the NOTICE file
 * distributed with this work for additional information
 * regarding copyright ownership.  The ASF licenses this file
 * to you under the Apache License, Version 2.0 (the
 * "License"); you may not use this file except in compliance
 * with the License.  You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

// cqlbench compatibility shim for Cassandra 5.0.x and 6.0.x on JDK 24 and newer.
//
// This is Cassandra's own org.apache.cassandra.security.ThreadAwareSecurityManager (identical in 5.0.9 and
// 6.0-alpha2) with exactly two statements removed, because JDK 24+ (JEP 486) refuses both and they are the only
// reason those versions cannot start there:
//
//   1. the static initializer's Policy.setPolicy(...)   -> "Setting a system-wide Policy object is not supported"
//   2. install()'s System.setSecurityManager(...)      -> "The Security Manager is deprecated and will be removed"
//
// Everything else is kept as it is in Cassandra: the public API (install, isSecuredThread, noPermissions), the
// logging hook install() runs (LoggingSupportFactory...onStartup), and the permission checks (which the JDK only
// ever calls on an installed Security Manager, so they are dead code here, as they are in Cassandra when no manager
// could be installed).
//
// Without a Security Manager, Java user-defined functions would run without their sandbox, so install() refuses to
// let the node start when user_defined_functions_enabled is true: UDFs stay disabled, as they are by default.
//
// cqlbench compiles this file with the node's own JDK (javac) against the Cassandra version's jars at first use,
// caches the class files, puts them ahead of Cassandra's jars on the classpath, and records in cluster.json that
// the shim was used. See crates/cluster/compat/README.md.

package org.apache.cassandra.security;

import java.lang.reflect.ReflectPermission;
import java.security.AccessControlException;
import java.security.Permission;
import java.security.PermissionCollection;
import java.util.Collections;
import java.util.Enumeration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.util.concurrent.FastThreadLocal;
import org.apache.cassandra.config.DatabaseDescriptor;
import org.apache.cassandra.utils.logging.LoggingSupportFactory;

@SuppressWarnings("removal")
public final class ThreadAwareSecurityManager extends SecurityManager
{
    private static final Logger logger = LoggerFactory.getLogger(ThreadAwareSecurityManager.class);

    /** The line the node logs at start-up, so its log shows that the shim ran (cqlbench's tests look for it). */
    public static final String SHIM_NOTICE = "cqlbench compatibility shim: JDK %s cannot install a Security Manager " +
                                             "(JEP 486), so none is installed; user-defined functions stay disabled";

    public static final PermissionCollection noPermissions = new PermissionCollection()
    {
        public void add(Permission permission)
        {
            throw new UnsupportedOperationException();
        }

        public boolean implies(Permission permission)
        {
            return false;
        }

        public Enumeration<Permission> elements()
        {
            return Collections.emptyEnumeration();
        }
    };

    private static final RuntimePermission CHECK_MEMBER_ACCESS_PERMISSION = new RuntimePermission("accessDeclaredMembers");
    private static final RuntimePermission MODIFY_THREAD_PERMISSION = new RuntimePermission("modifyThread");
    private static final RuntimePermission MODIFY_THREADGROUP_PERMISSION = new RuntimePermission("modifyThreadGroup");
    private static final RuntimePermission SET_SECURITY_MANAGER_PERMISSION = new RuntimePermission("setSecurityManager");

    // Nashorn / Java 11
    private static final RuntimePermission NASHORN_GLOBAL_PERMISSION = new RuntimePermission("nashorn.createGlobal");
    private static final ReflectPermission SUPPRESS_ACCESS_CHECKS_PERMISSION = new ReflectPermission("suppressAccessChecks");
    private static final RuntimePermission DYNALINK_LOOKUP_PERMISSION = new RuntimePermission("dynalink.getLookup");
    private static final RuntimePermission GET_CLASSLOADER_PERMISSION = new RuntimePermission("getClassLoader");

    private static volatile boolean installed;

    public static void install()
    {
        if (installed)
            return;

        // Kept from Cassandra: loads AccessControlException early.
        //noinspection PlaceholderCountMatchesArgumentCount
        logger.trace("Initialized thread aware security manager", AccessControlException.class.getName());

        // Shim: no System.setSecurityManager (JDK 24+ throws). UDFs would have no sandbox, so they must stay off.
        if (DatabaseDescriptor.enableUserDefinedFunctions())
            throw new IllegalStateException("user_defined_functions_enabled is true, but JDK " +
                                            System.getProperty("java.specification.version") +
                                            " cannot install the Security Manager that sandboxes user-defined " +
                                            "functions (cqlbench compatibility shim): disable them or use JDK 17/21");
        logger.info(String.format(SHIM_NOTICE, System.getProperty("java.specification.version")));

        LoggingSupportFactory.getLoggingSupport().onStartup();
        installed = true;
    }

    // Shim: Cassandra's static initializer only installs its Policy (Policy.setPolicy), which JDK 24+ refuses; a
    // Policy is only ever consulted through an installed Security Manager, so there is nothing else to keep.

    private static final FastThreadLocal<Boolean> initializedThread = new FastThreadLocal<>();

    private ThreadAwareSecurityManager()
    {
    }

    public static boolean isSecuredThread()
    {
        ThreadGroup tg = Thread.currentThread().getThreadGroup();
        if (!(tg instanceof SecurityThreadGroup))
            return false;
        Boolean threadInitialized = initializedThread.get();
        if (threadInitialized == null)
        {
            initializedThread.set(false);
            ((SecurityThreadGroup) tg).initializeThread();
            initializedThread.set(true);
            threadInitialized = true;
        }
        return threadInitialized;
    }

    public void checkAccess(Thread t)
    {
        // need to override since the default implementation only checks the permission if the current thread's
        // in the root-thread-group

        if (isSecuredThread())
            throw new AccessControlException("access denied: " + MODIFY_THREAD_PERMISSION, MODIFY_THREAD_PERMISSION);
        super.checkAccess(t);
    }

    public void checkAccess(ThreadGroup g)
    {
        // need to override since the default implementation only checks the permission if the current thread's
        // in the root-thread-group

        if (isSecuredThread())
            throw new AccessControlException("access denied: " + MODIFY_THREADGROUP_PERMISSION, MODIFY_THREADGROUP_PERMISSION);
        super.checkAccess(g);
    }

    public void checkPermission(Permission perm)
    {
        if (!DatabaseDescriptor.enableUserDefinedFunctionsThreads() && !DatabaseDescriptor.allowExtraInsecureUDFs() && SET_SECURITY_MANAGER_PERMISSION.equals(perm))
            throw new AccessControlException("Access denied");

        if (!isSecuredThread())
            return;

        // required by JavaDriver 2.2.0-rc3 and 3.0.0-a2 or newer
        // code in com.datastax.driver.core.CodecUtils uses Guava stuff, which in turns requires this permission
        if (CHECK_MEMBER_ACCESS_PERMISSION.equals(perm))
            return;

        // Nashorn / Java 11
        if (NASHORN_GLOBAL_PERMISSION.equals(perm))
            return;
        if (SUPPRESS_ACCESS_CHECKS_PERMISSION.equals(perm))
            return;
        if (DYNALINK_LOOKUP_PERMISSION.equals(perm))
            return;
        if (GET_CLASSLOADER_PERMISSION.equals(perm))
            return;

        super.checkPermission(perm);
    }

    public void checkPermission(Permission perm, Object context)
    {
        if (isSecuredThread())
            super.checkPermission(perm, context);
    }

    public void checkPackageAccess(String pkg)
    {
        if (!isSecuredThread())
            return;

        if (!((SecurityThreadGroup) Thread.currentThread().getThreadGroup()).isPackageAllowed(pkg))
        {
            RuntimePermission perm = new RuntimePermission("accessClassInPackage." + pkg);
            throw new AccessControlException("access denied: " + perm, perm);
        }
    }
}
